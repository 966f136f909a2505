package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// User is a GitHub account.
type User struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

// IsBot says whether the account is an app or bot.
func (u User) IsBot() bool { return u.Type == "Bot" || strings.HasSuffix(u.Login, "[bot]") }

// Label is a repository label.
type Label struct {
	Name        string `json:"name"`
	Color       string `json:"color,omitempty"`
	Description string `json:"description,omitempty"`
}

// Repository is what ralph reads of a repository.
type Repository struct {
	FullName      string `json:"full_name"`
	DefaultBranch string `json:"default_branch"`
	HTMLURL       string `json:"html_url"`
	Private       bool   `json:"private"`
}

// Issue is an issue (or, with PullRequest set, a pull request seen through the issues API).
type Issue struct {
	ID          int64     `json:"id"`
	NodeID      string    `json:"node_id"`
	Number      int       `json:"number"`
	Title       string    `json:"title"`
	Body        string    `json:"body"`
	State       string    `json:"state"`
	StateReason string    `json:"state_reason"`
	HTMLURL     string    `json:"html_url"`
	User        User      `json:"user"`
	Labels      []Label   `json:"labels"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	PullRequest *struct {
		URL string `json:"url"`
	} `json:"pull_request,omitempty"`
	// Dependencies counts the issues this one is blocked by; nil when GitHub's answer did not say.
	Dependencies *Dependencies `json:"issue_dependencies_summary,omitempty"`
}

// Dependencies is GitHub's summary of an issue's blocked-by and blocking dependencies.
type Dependencies struct {
	BlockedBy      int `json:"blocked_by"`
	TotalBlockedBy int `json:"total_blocked_by"`
}

// IsPull says whether the issue is a pull request.
func (i Issue) IsPull() bool { return i.PullRequest != nil }

// LabelNames lists the issue's label names.
func (i Issue) LabelNames() []string {
	names := make([]string, 0, len(i.Labels))
	for _, l := range i.Labels {
		names = append(names, l.Name)
	}
	return names
}

// Comment is an issue comment.
type Comment struct {
	ID        int64     `json:"id"`
	NodeID    string    `json:"node_id"`
	Body      string    `json:"body"`
	User      User      `json:"user"`
	HTMLURL   string    `json:"html_url"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PullRequest is what ralph reads of a pull request.
type PullRequest struct {
	Number   int        `json:"number"`
	Title    string     `json:"title"`
	Body     string     `json:"body"`
	State    string     `json:"state"`
	HTMLURL  string     `json:"html_url"`
	Draft    bool       `json:"draft"`
	Merged   bool       `json:"merged"`
	MergedAt *time.Time `json:"merged_at"`
	User     User       `json:"user"` // who opened it
	Head     struct {
		Ref  string `json:"ref"`
		SHA  string `json:"sha"`
		Repo *struct {
			FullName string `json:"full_name"`
		} `json:"repo"` // nil when the fork it came from is deleted
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

// IsMerged is true for a merged pull request (list answers carry merged_at, not merged).
func (p PullRequest) IsMerged() bool { return p.Merged || p.MergedAt != nil }

// NewPull describes a pull request to open.
type NewPull struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	Head  string `json:"head"`
	Base  string `json:"base"`
	Draft bool   `json:"draft"`
}

// WorkflowRun is what ralph reads of an Actions run.
type WorkflowRun struct {
	ID         int64  `json:"id"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
	HTMLURL    string `json:"html_url"`
	// DisplayTitle is the run's title: the workflow's run-name, as it evaluated for the run's event.
	DisplayTitle string `json:"display_title"`
	Path         string `json:"path"`  // the workflow file: .github/workflows/ralph.yml
	Event        string `json:"event"` // what started it: workflow_dispatch, issues, …
}

// Ref is a git reference.
type Ref struct {
	Ref    string `json:"ref"`
	Object struct {
		SHA  string `json:"sha"`
		Type string `json:"type"`
	} `json:"object"`
}

// Repository reads the repository.
func (c *Client) Repository(ctx context.Context) (Repository, error) {
	var r Repository
	_, err := c.do(ctx, http.MethodGet, c.repoPath(), nil, &r)
	return r, err
}

// Issue reads issue (or pull request) n.
func (c *Client) Issue(ctx context.Context, n int) (Issue, error) {
	var i Issue
	_, err := c.do(ctx, http.MethodGet, c.repoPath("issues", strconv.Itoa(n)), nil, &i)
	return i, err
}

// IssueFilter selects issues to list.
type IssueFilter struct {
	State  string   // open (default), closed, all
	Labels []string // all must be on the issue
}

// Issues lists issues (not pull requests), oldest first, every page.
func (c *Client) Issues(ctx context.Context, f IssueFilter) ([]Issue, error) {
	q := url.Values{"per_page": {"100"}, "sort": {"created"}, "direction": {"asc"}}
	if f.State != "" {
		q.Set("state", f.State)
	}
	if len(f.Labels) > 0 {
		q.Set("labels", strings.Join(f.Labels, ","))
	}
	all, err := list[Issue](ctx, c, c.repoPath("issues")+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	issues := all[:0]
	for _, i := range all {
		if !i.IsPull() {
			issues = append(issues, i)
		}
	}
	return issues, nil
}

// AddLabels adds labels to issue n; GitHub creates labels the repository does not have yet.
func (c *Client) AddLabels(ctx context.Context, n int, labels ...string) error {
	// Adding a label the issue has already changes nothing: safe to send again.
	_, err := c.do(context.WithValue(ctx, repeatKey{}, true), http.MethodPost, c.repoPath("issues", strconv.Itoa(n), "labels"), map[string][]string{"labels": labels}, nil)
	return err
}

// RemoveLabel removes a label from issue n; a label that is not there is not an error.
func (c *Client) RemoveLabel(ctx context.Context, n int, label string) error {
	_, err := c.do(ctx, http.MethodDelete, c.repoPath("issues", strconv.Itoa(n), "labels", label), nil, nil)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// Labels lists the repository's labels.
func (c *Client) Labels(ctx context.Context) ([]Label, error) {
	return list[Label](ctx, c, c.repoPath("labels")+"?per_page=100")
}

// CreateLabel creates a repository label.
func (c *Client) CreateLabel(ctx context.Context, l Label) error {
	_, err := c.do(ctx, http.MethodPost, c.repoPath("labels"), l, nil)
	return err
}

// Comments lists every comment on issue n, oldest first.
func (c *Client) Comments(ctx context.Context, n int) ([]Comment, error) {
	return list[Comment](ctx, c, c.repoPath("issues", strconv.Itoa(n), "comments")+"?per_page=100")
}

// CreateComment posts a comment on issue n. A 5xx answer is not retried: GitHub may have posted it all the
// same, and only the caller can tell (see the engine's markers).
func (c *Client) CreateComment(ctx context.Context, n int, body string) (Comment, error) {
	var cm Comment
	_, err := c.do(context.WithValue(ctx, createKey{}, true), http.MethodPost, c.repoPath("issues", strconv.Itoa(n), "comments"), map[string]string{"body": body}, &cm)
	return cm, err
}

// UpdateComment replaces a comment's body.
func (c *Client) UpdateComment(ctx context.Context, id int64, body string) (Comment, error) {
	var cm Comment
	// An edit sets the whole body: sent twice, it leaves the comment as sent once.
	_, err := c.do(context.WithValue(ctx, repeatKey{}, true), http.MethodPatch, c.repoPath("issues", "comments", strconv.FormatInt(id, 10)), map[string]string{"body": body}, &cm)
	return cm, err
}

// FindPull finds the newest pull request from branch head (in this repository) into base, in any state;
// nil when there is none.
func (c *Client) FindPull(ctx context.Context, head, base string) (*PullRequest, error) {
	q := url.Values{"head": {c.owner + ":" + head}, "state": {"all"}, "per_page": {"10"}}
	if base != "" {
		q.Set("base", base)
	}
	var pulls []PullRequest
	if _, err := c.do(ctx, http.MethodGet, c.repoPath("pulls")+"?"+q.Encode(), nil, &pulls); err != nil {
		return nil, err
	}
	if len(pulls) == 0 {
		return nil, nil
	}
	best := pulls[0]
	for _, p := range pulls[1:] {
		if p.Number > best.Number {
			best = p
		}
	}
	return &best, nil
}

// Pull reads pull request n.
func (c *Client) Pull(ctx context.Context, n int) (PullRequest, error) {
	var p PullRequest
	_, err := c.do(ctx, http.MethodGet, c.repoPath("pulls", strconv.Itoa(n)), nil, &p)
	return p, err
}

// CreatePull opens a pull request.
func (c *Client) CreatePull(ctx context.Context, p NewPull) (PullRequest, error) {
	var pr PullRequest
	_, err := c.do(ctx, http.MethodPost, c.repoPath("pulls"), p, &pr)
	return pr, err
}

// Permission is user's permission on the repository: admin, maintain, write, triage, read or none.
func (c *Client) Permission(ctx context.Context, user string) (string, error) {
	var p struct {
		Permission string `json:"permission"`
		RoleName   string `json:"role_name"`
	}
	_, err := c.do(ctx, http.MethodGet, c.repoPath("collaborators", user, "permission"), nil, &p)
	if errors.Is(err, ErrNotFound) {
		return "none", nil
	}
	if err != nil {
		return "", err
	}
	// role_name tells maintain and triage apart; permission folds them into write and read.
	switch p.RoleName {
	case "admin", "maintain", "write", "triage", "read":
		return p.RoleName, nil
	}
	return p.Permission, nil
}

// DispatchedRun is the run a dispatch started, when GitHub says which (return_run_details).
type DispatchedRun struct {
	ID      int64  `json:"workflow_run_id"`
	HTMLURL string `json:"html_url"`
}

// DispatchWorkflow starts a workflow_dispatch run of workflow (a file name or id) on ref and returns the
// run GitHub started (zero when it answers without details, as older GitHub Enterprise servers do).
//
// Unlike other creates, a dispatch whose outcome is unknown (a 5xx, a lost answer) is sent again: without
// it the chain of step runs ends until the next sweep. A second run is harmless: the run that dispatches
// its own issue's next step holds that issue's concurrency group, where GitHub keeps one pending run and
// a newer one replaces the older; a run for another issue that meets a twin finds the issue held by it,
// or its step done, and ends without a step (the engine's lock serializes steps).
func (c *Client) DispatchWorkflow(ctx context.Context, workflow, ref string, inputs map[string]string) (DispatchedRun, error) {
	body := map[string]any{"ref": ref, "return_run_details": true}
	if len(inputs) > 0 {
		body["inputs"] = inputs
	}
	var r DispatchedRun
	_, err := c.do(context.WithValue(ctx, repeatKey{}, true), http.MethodPost, c.repoPath("actions", "workflows", workflow, "dispatches"), body, &r)
	return r, err
}

// WorkflowRun reads an Actions run.
func (c *Client) WorkflowRun(ctx context.Context, id int64) (WorkflowRun, error) {
	var r WorkflowRun
	_, err := c.do(ctx, http.MethodGet, c.repoPath("actions", "runs", strconv.FormatInt(id, 10)), nil, &r)
	return r, err
}

// UnfinishedRuns lists the repository's latest workflow runs (the newest 100, one request) that have not
// completed: queued, waiting for their concurrency group, or running.
func (c *Client) UnfinishedRuns(ctx context.Context) ([]WorkflowRun, error) {
	var page struct {
		Runs []WorkflowRun `json:"workflow_runs"`
	}
	if _, err := c.do(ctx, http.MethodGet, c.repoPath("actions", "runs")+"?per_page=100", nil, &page); err != nil {
		return nil, err
	}
	var out []WorkflowRun
	for _, r := range page.Runs {
		if r.Status != "completed" {
			out = append(out, r)
		}
	}
	return out, nil
}

// GetRef reads a ref ("heads/main", "ralph/locks/47"); ErrNotFound when absent.
func (c *Client) GetRef(ctx context.Context, ref string) (Ref, error) {
	var r Ref
	_, err := c.do(ctx, http.MethodGet, c.repoPath("git", "ref")+"/"+escapeRef(ref), nil, &r)
	return r, err
}

// CreateRef creates a ref ("refs/…"); GitHub refuses (422) when it exists, which makes this a compare-and-swap.
func (c *Client) CreateRef(ctx context.Context, ref, sha string) error {
	_, err := c.do(ctx, http.MethodPost, c.repoPath("git", "refs"), map[string]string{"ref": ref, "sha": sha}, nil)
	return err
}

// UpdateRef moves a ref ("heads/x"); force false requires a fast-forward.
func (c *Client) UpdateRef(ctx context.Context, ref, sha string, force bool) error {
	_, err := c.do(ctx, http.MethodPatch, c.repoPath("git", "refs")+"/"+escapeRef(ref), map[string]any{"sha": sha, "force": force}, nil)
	return err
}

// DeleteRef deletes a ref ("heads/x"); one already gone is not an error.
func (c *Client) DeleteRef(ctx context.Context, ref string) error {
	_, err := c.do(ctx, http.MethodDelete, c.repoPath("git", "refs")+"/"+escapeRef(ref), nil, nil)
	// GitHub answers a missing ref with 422 "Reference does not exist", not 404.
	var ge *Error
	if errors.Is(err, ErrNotFound) ||
		(errors.As(err, &ge) && ge.Status == http.StatusUnprocessableEntity && strings.HasPrefix(ge.Message, "Reference does not exist")) {
		return nil
	}
	return err
}

// escapeRef escapes each segment of a ref but keeps the slashes, as GitHub's ref endpoints expect.
func escapeRef(ref string) string {
	segs := strings.Split(strings.TrimPrefix(ref, "refs/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// BlobURL is the web link to a file on a branch.
func (c *Client) BlobURL(branch, path string) string {
	return fmt.Sprintf("%s/%s/%s/blob/%s/%s", c.endpoints.Server, c.owner, c.repo, escapeRef(branch), path)
}

// RunURL is the web link to an Actions run.
func (c *Client) RunURL(id int64) string {
	return fmt.Sprintf("%s/%s/%s/actions/runs/%d", c.endpoints.Server, c.owner, c.repo, id)
}

// TreeURL is the web link to a branch.
func (c *Client) TreeURL(branch string) string {
	return fmt.Sprintf("%s/%s/%s/tree/%s", c.endpoints.Server, c.owner, c.repo, escapeRef(branch))
}
