package ghapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// issueQuery reads an issue (or pull request) and a page of its comments. The fields are those of the
// REST issue and comment that ralph reads; see IssueWithComments.
const issueQuery = `query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    issueOrPullRequest(number: $number) {
      __typename
      ... on Issue {
        databaseId id number title body state stateReason url createdAt updatedAt
        author { ...actor }
        labels(first: 100) { nodes { name color description } }
        comments(first: 100, after: $after) { ...comments }
      }
      ... on PullRequest {
        databaseId id number title body pullState: state url createdAt updatedAt
        author { ...actor }
        labels(first: 100) { nodes { name color description } }
        comments(first: 100, after: $after) { ...comments }
      }
    }
  }
}
fragment actor on Actor { __typename login ... on User { databaseId } ... on Bot { databaseId } }
fragment comments on IssueCommentConnection {
  pageInfo { hasNextPage endCursor }
  nodes { databaseId id body url createdAt updatedAt author { ...actor } }
}`

type gqlActor struct {
	Typename   string `json:"__typename"`
	Login      string `json:"login"`
	DatabaseID int64  `json:"databaseId"`
}

// user is the account as the REST API shows it: a bot's login ends in "[bot]", which GraphQL leaves off.
func (a *gqlActor) user() User {
	if a == nil {
		return User{Login: "ghost", Type: "User"} // a deleted account, as REST shows it
	}
	u := User{Login: a.Login, ID: a.DatabaseID, Type: a.Typename}
	if a.Typename == "Bot" && !strings.HasSuffix(u.Login, "[bot]") {
		u.Login += "[bot]"
	}
	return u
}

type gqlIssue struct {
	Typename    string    `json:"__typename"`
	DatabaseID  int64     `json:"databaseId"`
	ID          string    `json:"id"`
	Number      int       `json:"number"`
	Title       string    `json:"title"`
	Body        string    `json:"body"`
	State       string    `json:"state"`
	PullState   string    `json:"pullState"` // a pull request's state, which may be MERGED
	StateReason *string   `json:"stateReason"`
	URL         string    `json:"url"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	Author      *gqlActor `json:"author"`
	Labels      struct {
		Nodes []Label `json:"nodes"`
	} `json:"labels"`
	Comments struct {
		PageInfo struct {
			HasNextPage bool   `json:"hasNextPage"`
			EndCursor   string `json:"endCursor"`
		} `json:"pageInfo"`
		Nodes []struct {
			DatabaseID int64     `json:"databaseId"`
			ID         string    `json:"id"`
			Body       string    `json:"body"`
			URL        string    `json:"url"`
			CreatedAt  time.Time `json:"createdAt"`
			UpdatedAt  time.Time `json:"updatedAt"`
			Author     *gqlActor `json:"author"`
		} `json:"nodes"`
	} `json:"comments"`
}

// IssueWithComments reads issue (or pull request) n and all its comments in one GraphQL query, where the
// REST API takes two requests (Issue and Comments); only an issue with more than 100 comments takes more,
// one query per further 100. Issue and comments are as the REST calls give them, field for field as
// ralph reads them: ids are the REST ids (databaseId), state and state reason in REST's lower case (a
// merged pull request is "closed"), a bot's login with its "[bot]".
func (c *Client) IssueWithComments(ctx context.Context, n int) (Issue, []Comment, error) {
	is, comments, _, err := c.IssueWithCommentsFor(ctx, n, "")
	return is, comments, err
}

// IssueWithCommentsFor is IssueWithComments that also asks, in the same query, the permission login has on
// the repository ("admin", "maintain", "write", "triage" or "read"; "" when GitHub does not say: login is
// no collaborator GraphQL lists, or the token may not see the collaborators). Only a role GitHub names is
// an answer; "" asks for the Permission request.
func (c *Client) IssueWithCommentsFor(ctx context.Context, n int, login string) (Issue, []Comment, string, error) {
	var (
		is       Issue
		comments []Comment
		perm     string
		after    any // null on the first page
	)
	for page := 0; ; page++ {
		asking := login
		if page > 0 {
			asking = ""
		}
		gi, p, err := c.issuePage(ctx, n, after, asking)
		if err != nil {
			return Issue{}, nil, "", err
		}
		if page == 0 {
			is, perm = gi.issue(c), p
		}
		for _, cm := range gi.Comments.Nodes {
			comments = append(comments, Comment{ID: cm.DatabaseID, NodeID: cm.ID, Body: cm.Body, User: cm.Author.user(),
				HTMLURL: cm.URL, CreatedAt: cm.CreatedAt, UpdatedAt: cm.UpdatedAt})
		}
		if !gi.Comments.PageInfo.HasNextPage {
			break
		}
		after = gi.Comments.PageInfo.EndCursor
	}
	return is, comments, perm, nil
}

// collaboratorQuery is the field issuePage adds to ask one person's role; login: matches the login exactly
// (query: would match others too).
const collaboratorQuery = `collaborators(login: $login, first: 1) { edges { permission node { login } } }`

// issueQueryFor is issueQuery asking, as well, the role of $login.
var issueQueryFor = strings.Replace(strings.Replace(issueQuery, "$after: String)", "$after: String, $login: String!)", 1),
	"repository(owner: $owner, name: $name) {", "repository(owner: $owner, name: $name) {\n    "+collaboratorQuery, 1)

func (c *Client) issuePage(ctx context.Context, n int, after any, login string) (*gqlIssue, string, error) {
	var out struct {
		Data struct {
			Repository *struct {
				IssueOrPullRequest *gqlIssue `json:"issueOrPullRequest"`
				Collaborators      *struct {
					Edges []struct {
						Permission string `json:"permission"`
						Node       struct {
							Login string `json:"login"`
						} `json:"node"`
					} `json:"edges"`
				} `json:"collaborators"`
			} `json:"repository"`
		} `json:"data"`
		Errors []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
			Path    []any  `json:"path"`
		} `json:"errors"`
	}
	query, vars := issueQuery, map[string]any{"owner": c.owner, "name": c.repo, "number": n, "after": after}
	if login != "" {
		query, vars["login"] = issueQueryFor, login
	}
	if _, err := c.do(readQuery(ctx, query), http.MethodPost, c.endpoints.GraphQL, map[string]any{"query": query, "variables": vars}, &out); err != nil {
		return nil, "", err
	}
	var failed string
	for _, e := range out.Errors {
		switch {
		case len(e.Path) >= 2 && e.Path[0] == "repository" && e.Path[1] == "collaborators":
			// The role is not said: the caller asks the Permission request.
		case e.Type == "NOT_FOUND":
			return nil, "", fmt.Errorf("issue #%d: %s: %w", n, e.Message, ErrNotFound)
		case failed == "":
			failed = e.Message
		}
	}
	if failed != "" {
		return nil, "", fmt.Errorf("reading issue #%d: GraphQL: %s", n, failed)
	}
	if out.Data.Repository == nil || out.Data.Repository.IssueOrPullRequest == nil {
		return nil, "", fmt.Errorf("issue #%d: %w", n, ErrNotFound)
	}
	perm := ""
	if cs := out.Data.Repository.Collaborators; cs != nil {
		for _, e := range cs.Edges {
			if strings.EqualFold(e.Node.Login, login) {
				perm = strings.ToLower(e.Permission)
			}
		}
	}
	return out.Data.Repository.IssueOrPullRequest, perm, nil
}

func (g *gqlIssue) issue(c *Client) Issue {
	is := Issue{ID: g.DatabaseID, NodeID: g.ID, Number: g.Number, Title: g.Title, Body: g.Body,
		State: strings.ToLower(g.State), HTMLURL: g.URL, User: g.Author.user(), Labels: g.Labels.Nodes,
		CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
	if is.Labels == nil {
		is.Labels = []Label{}
	}
	if g.StateReason != nil {
		is.StateReason = strings.ToLower(*g.StateReason)
	}
	if g.Typename == "PullRequest" {
		is.State = "open"
		if g.PullState != "OPEN" {
			is.State = "closed" // closed or merged
		}
		is.PullRequest = &struct {
			URL string `json:"url"`
		}{URL: c.repoPath("pulls", strconv.Itoa(g.Number))}
	}
	return is
}
