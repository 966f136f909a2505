package ghapi

import (
	"context"
	"net/http"
	"strconv"
)

// NewIssue describes an issue to open.
type NewIssue struct {
	Title  string   `json:"title"`
	Body   string   `json:"body,omitempty"`
	Labels []string `json:"labels,omitempty"`
}

// CreateIssue opens an issue. A 5xx answer is not retried, for the reason CreateComment gives.
func (c *Client) CreateIssue(ctx context.Context, ni NewIssue) (Issue, error) {
	var i Issue
	_, err := c.do(context.WithValue(ctx, createKey{}, true), http.MethodPost, c.repoPath("issues"), ni, &i)
	return i, err
}

// SetLabels replaces issue n's labels in one request.
func (c *Client) SetLabels(ctx context.Context, n int, labels []string) error {
	if len(labels) == 0 {
		// GitHub's description requires at least one label here; no labels is a DELETE of them all.
		_, err := c.do(ctx, http.MethodDelete, c.repoPath("issues", strconv.Itoa(n), "labels"), nil, nil)
		return err
	}
	_, err := c.do(ctx, http.MethodPut, c.repoPath("issues", strconv.Itoa(n), "labels"), map[string][]string{"labels": labels}, nil)
	return err
}

// SubIssues lists issue n's sub-issues.
func (c *Client) SubIssues(ctx context.Context, n int) ([]Issue, error) {
	return list[Issue](ctx, c, c.repoPath("issues", strconv.Itoa(n), "sub_issues")+"?per_page=100")
}

// AddSubIssue makes the issue whose database id is childID a sub-issue of issue n.
func (c *Client) AddSubIssue(ctx context.Context, n int, childID int64) error {
	_, err := c.do(ctx, http.MethodPost, c.repoPath("issues", strconv.Itoa(n), "sub_issues"), map[string]int64{"sub_issue_id": childID}, nil)
	return err
}

// BlockedBy lists the issues that block issue n.
func (c *Client) BlockedBy(ctx context.Context, n int) ([]Issue, error) {
	return list[Issue](ctx, c, c.repoPath("issues", strconv.Itoa(n), "dependencies", "blocked_by")+"?per_page=100")
}

// AddBlockedBy records that issue n is blocked by the issue whose database id is blockerID.
func (c *Client) AddBlockedBy(ctx context.Context, n int, blockerID int64) error {
	_, err := c.do(ctx, http.MethodPost, c.repoPath("issues", strconv.Itoa(n), "dependencies", "blocked_by"), map[string]int64{"issue_id": blockerID}, nil)
	return err
}

// MatchingRefs lists the refs that start with prefix ("ralph/locks/").
func (c *Client) MatchingRefs(ctx context.Context, prefix string) ([]Ref, error) {
	var refs []Ref
	_, err := c.do(ctx, http.MethodGet, c.repoPath("git", "matching-refs")+"/"+escapeRef(prefix), nil, &refs)
	return refs, err
}
