package ghapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Review is a pull request review.
type Review struct {
	ID                int64     `json:"id"`
	User              User      `json:"user"`
	Body              string    `json:"body"`
	State             string    `json:"state"` // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
	CommitID          string    `json:"commit_id"`
	AuthorAssociation string    `json:"author_association"`
	SubmittedAt       time.Time `json:"submitted_at"`
	HTMLURL           string    `json:"html_url"`
}

// Reviews lists pull request pr's reviews, oldest first.
func (c *Client) Reviews(ctx context.Context, pr int) ([]Review, error) {
	return list[Review](ctx, c, c.repoPath("pulls", strconv.Itoa(pr), "reviews")+"?per_page=100")
}

// ReviewThread is one review thread of a pull request: a conversation on a line of its diff.
type ReviewThread struct {
	ID       string // GraphQL node id
	Path     string // the file
	Line     int    // the line in the file; 0 when the thread's line is no longer in the diff
	DiffHunk string // the diff hunk the thread's first comment was made on
	Resolved bool
	Outdated bool
	Comments []ReviewComment // in the order they were written; reply to the first one
}

// ReviewComment is one comment of a review thread. Everything in it but the ids is someone's text.
type ReviewComment struct {
	ID     int64  // the REST id, which ReplyToReviewComment takes
	Author string // login; a bot's ends in "[bot]", as the REST API shows it; "ghost" for a deleted account
	// Association is the author's relation to the repository as GitHub names it: OWNER, MEMBER,
	// COLLABORATOR, CONTRIBUTOR, FIRST_TIMER, FIRST_TIME_CONTRIBUTOR, MANNEQUIN or NONE. It describes;
	// it is no permission check (Permission is).
	Association string
	Body        string
	URL         string
	CreatedAt   time.Time
}

// reviewThreadsQuery reads one page of a pull request's review threads, each with up to 100 comments in
// order (a thread longer than that is read further by reviewCommentsQuery).
const reviewThreadsQuery = `query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      author { __typename login }
      reviewThreads(first: 50, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved isOutdated path line
          comments(first: 100) { ...threadComments }
        }
      }
    }
  }
}
` + threadCommentsFragment

// reviewCommentsQuery reads the further comments of a long thread.
const reviewCommentsQuery = `query($id: ID!, $after: String) {
  node(id: $id) { ... on PullRequestReviewThread { comments(first: 100, after: $after) { ...threadComments } } }
}
` + threadCommentsFragment

const threadCommentsFragment = `fragment threadComments on PullRequestReviewCommentConnection {
  pageInfo { hasNextPage endCursor }
  nodes { fullDatabaseId body url createdAt diffHunk authorAssociation author { __typename login } }
}`

type gqlThreadComments struct {
	PageInfo struct {
		HasNextPage bool   `json:"hasNextPage"`
		EndCursor   string `json:"endCursor"`
	} `json:"pageInfo"`
	Nodes []struct {
		FullDatabaseID    string    `json:"fullDatabaseId"` // a BigInt: GitHub sends it as a string
		Body              string    `json:"body"`
		URL               string    `json:"url"`
		CreatedAt         time.Time `json:"createdAt"`
		DiffHunk          string    `json:"diffHunk"`
		AuthorAssociation string    `json:"authorAssociation"`
		Author            *gqlActor `json:"author"`
	} `json:"nodes"`
}

type gqlThread struct {
	ID         string            `json:"id"`
	IsResolved bool              `json:"isResolved"`
	IsOutdated bool              `json:"isOutdated"`
	Path       string            `json:"path"`
	Line       *int              `json:"line"`
	Comments   gqlThreadComments `json:"comments"`
}

// gqlErrors is the errors list of a GraphQL answer.
type gqlErrors []struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (es gqlErrors) err(what string) error {
	if len(es) == 0 {
		return nil
	}
	if es[0].Type == "NOT_FOUND" {
		return fmt.Errorf("%s: %s: %w", what, es[0].Message, ErrNotFound)
	}
	return fmt.Errorf("%s: GraphQL: %s", what, es[0].Message)
}

// graphQL posts one query and decodes its answer into out, whose Errors field it checks.
func (c *Client) graphQL(ctx context.Context, query string, vars map[string]any, out any) error {
	_, err := c.do(readQuery(ctx, query), http.MethodPost, c.endpoints.GraphQL, map[string]any{"query": query, "variables": vars}, out)
	return err
}

// ReviewThreads lists every review thread of pull request pr, resolved or not, each with all its comments
// in order, in one GraphQL query per 50 threads (and one per further 100 comments of a long thread).
func (c *Client) ReviewThreads(ctx context.Context, pr int) ([]ReviewThread, error) {
	_, threads, err := c.PullReviewThreads(ctx, pr)
	return threads, err
}

// PullReviewThreads is ReviewThreads with, from the same query, the login of the pull request's author, as
// REST names it ("" when GitHub names none: a deleted account), whom GitHub refuses to ask for a review.
func (c *Client) PullReviewThreads(ctx context.Context, pr int) (author string, threads []ReviewThread, err error) {
	what := fmt.Sprintf("reading the review threads of pull request #%d", pr)
	var after any
	for {
		var out struct {
			Data struct {
				Repository *struct {
					PullRequest *struct {
						Author        *gqlActor `json:"author"`
						ReviewThreads struct {
							PageInfo struct {
								HasNextPage bool   `json:"hasNextPage"`
								EndCursor   string `json:"endCursor"`
							} `json:"pageInfo"`
							Nodes []gqlThread `json:"nodes"`
						} `json:"reviewThreads"`
					} `json:"pullRequest"`
				} `json:"repository"`
			} `json:"data"`
			Errors gqlErrors `json:"errors"`
		}
		vars := map[string]any{"owner": c.owner, "name": c.repo, "number": pr, "after": after}
		if err := c.graphQL(ctx, reviewThreadsQuery, vars, &out); err != nil {
			return "", nil, err
		}
		if err := out.Errors.err(what); err != nil {
			return "", nil, err
		}
		if out.Data.Repository == nil || out.Data.Repository.PullRequest == nil {
			return "", nil, fmt.Errorf("%s: %w", what, ErrNotFound)
		}
		if a := out.Data.Repository.PullRequest.Author; a != nil {
			author = a.user().Login // a bot's with "[bot]", as REST and events name it
		}
		page := out.Data.Repository.PullRequest.ReviewThreads
		for _, g := range page.Nodes {
			th, err := c.thread(ctx, g)
			if err != nil {
				return "", nil, err
			}
			threads = append(threads, th)
		}
		if !page.PageInfo.HasNextPage {
			return author, threads, nil
		}
		after = page.PageInfo.EndCursor
	}
}

// UnresolvedReviewThreads is ReviewThreads without the threads people marked resolved.
func (c *Client) UnresolvedReviewThreads(ctx context.Context, pr int) ([]ReviewThread, error) {
	all, err := c.ReviewThreads(ctx, pr)
	if err != nil {
		return nil, err
	}
	var open []ReviewThread
	for _, th := range all {
		if !th.Resolved {
			open = append(open, th)
		}
	}
	return open, nil
}

func (c *Client) thread(ctx context.Context, g gqlThread) (ReviewThread, error) {
	th := ReviewThread{ID: g.ID, Path: g.Path, Resolved: g.IsResolved, Outdated: g.IsOutdated}
	if g.Line != nil {
		th.Line = *g.Line
	}
	page := g.Comments
	for {
		for _, n := range page.Nodes {
			id, err := strconv.ParseInt(n.FullDatabaseID, 10, 64)
			if err != nil {
				return ReviewThread{}, fmt.Errorf("review thread %s: comment id %q: %w", g.ID, n.FullDatabaseID, err)
			}
			if th.DiffHunk == "" {
				th.DiffHunk = n.DiffHunk
			}
			th.Comments = append(th.Comments, ReviewComment{ID: id, Author: n.Author.user().Login,
				Association: n.AuthorAssociation, Body: n.Body, URL: n.URL, CreatedAt: n.CreatedAt})
		}
		if !page.PageInfo.HasNextPage {
			return th, nil
		}
		var out struct {
			Data struct {
				Node *struct {
					Comments gqlThreadComments `json:"comments"`
				} `json:"node"`
			} `json:"data"`
			Errors gqlErrors `json:"errors"`
		}
		if err := c.graphQL(ctx, reviewCommentsQuery, map[string]any{"id": g.ID, "after": page.PageInfo.EndCursor}, &out); err != nil {
			return ReviewThread{}, err
		}
		if err := out.Errors.err("reading review thread " + g.ID); err != nil {
			return ReviewThread{}, err
		}
		if out.Data.Node == nil {
			return ReviewThread{}, fmt.Errorf("review thread %s: %w", g.ID, ErrNotFound)
		}
		page = out.Data.Node.Comments
	}
}

// ReplyToReviewComment replies in the thread whose first comment is commentID, on pull request pr. Like
// CreateComment, a 5xx answer is not retried (GitHub may have posted it).
func (c *Client) ReplyToReviewComment(ctx context.Context, pr int, commentID int64, body string) (ReviewComment, error) {
	var out struct {
		ID                int64     `json:"id"`
		Body              string    `json:"body"`
		HTMLURL           string    `json:"html_url"`
		CreatedAt         time.Time `json:"created_at"`
		AuthorAssociation string    `json:"author_association"`
		User              User      `json:"user"`
	}
	u := c.repoPath("pulls", strconv.Itoa(pr), "comments", strconv.FormatInt(commentID, 10), "replies")
	if _, err := c.do(context.WithValue(ctx, createKey{}, true), http.MethodPost, u, map[string]string{"body": body}, &out); err != nil {
		return ReviewComment{}, err
	}
	return ReviewComment{ID: out.ID, Author: out.User.Login, Association: out.AuthorAssociation, Body: out.Body,
		URL: out.HTMLURL, CreatedAt: out.CreatedAt}, nil
}

// RequestReview asks logins to review pull request pr (again, for someone who has reviewed it: GitHub's
// "re-request review"). GitHub refuses the pull request's author and anyone who is no collaborator.
func (c *Client) RequestReview(ctx context.Context, pr int, logins ...string) error {
	var clean []string
	for _, l := range logins {
		if l = strings.TrimSpace(l); l != "" {
			clean = append(clean, l)
		}
	}
	if len(clean) == 0 {
		return nil
	}
	_, err := c.do(ctx, http.MethodPost, c.repoPath("pulls", strconv.Itoa(pr), "requested_reviewers"), map[string][]string{"reviewers": clean}, nil)
	return err
}
