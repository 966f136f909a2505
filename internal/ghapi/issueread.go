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
	var (
		is       Issue
		comments []Comment
		after    any // null on the first page
	)
	for page := 0; ; page++ {
		gi, err := c.issuePage(ctx, n, after)
		if err != nil {
			return Issue{}, nil, err
		}
		if page == 0 {
			is = gi.issue(c)
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
	return is, comments, nil
}

func (c *Client) issuePage(ctx context.Context, n int, after any) (*gqlIssue, error) {
	var out struct {
		Data struct {
			Repository *struct {
				IssueOrPullRequest *gqlIssue `json:"issueOrPullRequest"`
			} `json:"repository"`
		} `json:"data"`
		Errors []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	req := map[string]any{"query": issueQuery, "variables": map[string]any{"owner": c.owner, "name": c.repo, "number": n, "after": after}}
	if _, err := c.do(ctx, http.MethodPost, c.endpoints.GraphQL, req, &out); err != nil {
		return nil, err
	}
	for _, e := range out.Errors {
		if e.Type == "NOT_FOUND" {
			return nil, fmt.Errorf("issue #%d: %s: %w", n, e.Message, ErrNotFound)
		}
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("reading issue #%d: GraphQL: %s", n, out.Errors[0].Message)
	}
	if out.Data.Repository == nil || out.Data.Repository.IssueOrPullRequest == nil {
		return nil, fmt.Errorf("issue #%d: %w", n, ErrNotFound)
	}
	return out.Data.Repository.IssueOrPullRequest, nil
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
