package ghapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

// emptyTree is git's empty tree, which the test server stores in every repository.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// newClient is the real client for octo/demo on srv, with retries that never wait.
func newClient(t *testing.T, srv *githubtest.Server) *ghapi.Client {
	t.Helper()
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token:     "test-token",
		Owner:     "octo",
		Repo:      "demo",
		Transport: srv.Client().Transport,
		Retry:     ghapi.Retry{Attempts: 3, Max: time.Minute, Sleep: func(context.Context, time.Duration) error { return nil }},
	})
	if err != nil {
		t.Fatalf("ghapi.New: %v", err)
	}
	return c
}

// rawPost sends a JSON request to the test server without the client under test (for set-up only).
func rawPost(t *testing.T, srv *githubtest.Server, path string, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token test-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s: HTTP %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// commit stores a commit (empty tree) on top of parent and returns its SHA.
func commit(t *testing.T, srv *githubtest.Server, parent, message string) string {
	t.Helper()
	var c struct{ SHA string }
	rawPost(t, srv, "/repos/octo/demo/git/commits",
		map[string]any{"message": message, "tree": emptyTree, "parents": []string{parent}}, &c)
	if c.SHA == "" {
		t.Fatal("commit: no SHA in answer")
	}
	return c.SHA
}

// branch creates branch name one commit ahead of main and returns the commit's SHA.
func branch(t *testing.T, c *ghapi.Client, srv *githubtest.Server, name string) string {
	t.Helper()
	ctx := context.Background()
	main, err := c.GetRef(ctx, "heads/main")
	if err != nil {
		t.Fatalf("GetRef heads/main: %v", err)
	}
	sha := commit(t, srv, main.Object.SHA, "work on "+name)
	if err := c.CreateRef(ctx, "refs/heads/"+name, sha); err != nil {
		t.Fatalf("CreateRef %s: %v", name, err)
	}
	return sha
}

func TestRepository(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	got, err := newClient(t, srv).Repository(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := ghapi.Repository{FullName: "octo/demo", DefaultBranch: "main", HTMLURL: srv.ServerURL + "/octo/demo"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Repository (-want +got):\n%s", diff)
	}
}

func TestIssue(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()
	n := srv.CreateIssue("alice", "Add a flag", "Please.", "ralph", "bug")
	branch(t, c, srv, "ralph/1-flag")
	pr, err := c.CreatePull(ctx, ghapi.NewPull{Title: "Add a flag", Head: "ralph/1-flag", Base: "main"})
	if err != nil {
		t.Fatalf("CreatePull: %v", err)
	}

	got, err := c.Issue(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(n, got.Number); diff != "" {
		t.Errorf("Number (-want +got):\n%s", diff)
	}
	for _, f := range []struct{ name, got, want string }{
		{"title", got.Title, "Add a flag"},
		{"body", got.Body, "Please."},
		{"state", got.State, "open"},
		{"user", got.User.Login, "alice"},
		{"html_url", got.HTMLURL, fmt.Sprintf("%s/octo/demo/issues/%d", srv.ServerURL, n)},
	} {
		if f.got != f.want {
			t.Errorf("issue %s = %q, want %q", f.name, f.got, f.want)
		}
	}
	if diff := cmp.Diff([]string{"bug", "ralph"}, sortedCopy(got.LabelNames())); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if got.IsPull() {
		t.Errorf("issue #%d IsPull = true, want false", n)
	}
	if got.CreatedAt.IsZero() {
		t.Errorf("issue #%d has no created_at", n)
	}

	p, err := c.Issue(ctx, pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	if !p.IsPull() {
		t.Errorf("pull #%d through the issues API: IsPull = false, want true", pr.Number)
	}

	_, err = c.Issue(ctx, 999)
	if !errors.Is(err, ghapi.ErrNotFound) {
		t.Errorf("Issue(999) error = %v, want ErrNotFound", err)
	}
	var ge *ghapi.Error
	if !errors.As(err, &ge) || ge.Status != http.StatusNotFound || ge.Method != http.MethodGet || ge.Path != "/repos/octo/demo/issues/999" {
		t.Errorf("Issue(999) error = %#v, want *ghapi.Error GET /repos/octo/demo/issues/999 404", err)
	}
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestIssues(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()

	var all, ralph, ralphBug []int
	for i := 1; i <= 105; i++ {
		var labels []string
		if i%3 == 0 {
			labels = append(labels, "ralph")
		}
		if i%5 == 0 {
			labels = append(labels, "bug")
		}
		n := srv.CreateIssue("alice", fmt.Sprintf("issue %d", i), "", labels...)
		all = append(all, n)
		if i%3 == 0 {
			ralph = append(ralph, n)
			if i%5 == 0 {
				ralphBug = append(ralphBug, n)
			}
		}
	}
	// A pull request carrying the label: the issues API lists it, Issues must not.
	branch(t, c, srv, "ralph/pull")
	pr, err := c.CreatePull(ctx, ghapi.NewPull{Title: "pull", Head: "ralph/pull", Base: "main"})
	if err != nil {
		t.Fatalf("CreatePull: %v", err)
	}
	if err := c.AddLabels(ctx, pr.Number, "ralph"); err != nil {
		t.Fatalf("AddLabels on pull: %v", err)
	}

	tests := []struct {
		name   string
		filter ghapi.IssueFilter
		want   []int
	}{
		{"every page", ghapi.IssueFilter{}, all},
		{"state all", ghapi.IssueFilter{State: "all"}, all},
		{"one label", ghapi.IssueFilter{Labels: []string{"ralph"}}, ralph},
		{"two labels", ghapi.IssueFilter{Labels: []string{"ralph", "bug"}}, ralphBug},
		{"closed", ghapi.IssueFilter{State: "closed"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issues, err := c.Issues(ctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, is := range issues {
				got = append(got, is.Number)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Issues(%+v) numbers (-want +got):\n%s", tt.filter, diff)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()
	n := srv.CreateIssue("alice", "t", "", "bug")

	if err := c.AddLabels(ctx, n, "ralph", "ralph:plan"); err != nil {
		t.Fatalf("AddLabels: %v", err)
	}
	if diff := cmp.Diff([]string{"bug", "ralph", "ralph:plan"}, sortedCopy(srv.Labels(n))); diff != "" {
		t.Errorf("after AddLabels (-want +got):\n%s", diff)
	}
	if err := c.RemoveLabel(ctx, n, "ralph:plan"); err != nil {
		t.Fatalf("RemoveLabel: %v", err)
	}
	if diff := cmp.Diff([]string{"bug", "ralph"}, sortedCopy(srv.Labels(n))); diff != "" {
		t.Errorf("after RemoveLabel (-want +got):\n%s", diff)
	}
	if err := c.RemoveLabel(ctx, n, "not-there"); err != nil {
		t.Errorf("RemoveLabel of an absent label: %v, want nil", err)
	}
	if err := c.RemoveLabel(ctx, 999, "bug"); err != nil {
		// A missing issue is also a 404; RemoveLabel does not tell them apart.
		t.Logf("RemoveLabel on a missing issue: %v", err)
	}

	if err := c.CreateLabel(ctx, ghapi.Label{Name: "ralph:blocked", Color: "d73a4a", Description: "waits for a human"}); err != nil {
		t.Fatalf("CreateLabel: %v", err)
	}
	err := c.CreateLabel(ctx, ghapi.Label{Name: "ralph:blocked", Color: "d73a4a"})
	var ge *ghapi.Error
	if !errors.As(err, &ge) || ge.Status != http.StatusUnprocessableEntity {
		t.Errorf("CreateLabel twice: error = %v, want *ghapi.Error with status 422", err)
	}

	labels, err := c.Labels(ctx)
	if err != nil {
		t.Fatalf("Labels: %v", err)
	}
	got := map[string]ghapi.Label{}
	for _, l := range labels {
		got[l.Name] = l
	}
	for _, name := range []string{"bug", "ralph", "ralph:plan"} {
		if _, ok := got[name]; !ok {
			t.Errorf("Labels lacks %q: %v", name, labels)
		}
	}
	if diff := cmp.Diff(ghapi.Label{Name: "ralph:blocked", Color: "d73a4a", Description: "waits for a human"}, got["ralph:blocked"]); diff != "" {
		t.Errorf("created label (-want +got):\n%s", diff)
	}
}

func TestLabelsPaginate(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()
	var want []string
	for i := range 103 {
		name := fmt.Sprintf("l%03d", i)
		want = append(want, name)
		if err := c.CreateLabel(ctx, ghapi.Label{Name: name, Color: "ededed"}); err != nil {
			t.Fatal(err)
		}
	}
	labels, err := c.Labels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range labels {
		got = append(got, l.Name)
	}
	if diff := cmp.Diff(want, sortedCopy(got)); diff != "" {
		t.Errorf("Labels over two pages (-want +got):\n%s", diff)
	}
}

func TestComments(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()
	n := srv.CreateIssue("alice", "t", "")
	var want []string
	for i := range 104 {
		body := fmt.Sprintf("comment %d", i)
		srv.AddComment(n, "bob", body)
		want = append(want, body)
	}

	cm, err := c.CreateComment(ctx, n, "ralph was here")
	if err != nil {
		t.Fatalf("CreateComment: %v", err)
	}
	want = append(want, "ralph was here")
	if cm.ID == 0 || cm.Body != "ralph was here" || cm.User.Login != githubtest.BotLogin || !cm.User.IsBot() {
		t.Errorf("CreateComment = %+v, want an ID, the body and the bot as user", cm)
	}

	comments, err := c.Comments(ctx, n)
	if err != nil {
		t.Fatalf("Comments: %v", err)
	}
	var got []string
	for _, x := range comments {
		got = append(got, x.Body)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Comments over two pages (-want +got):\n%s", diff)
	}

	up, err := c.UpdateComment(ctx, cm.ID, "ralph was here (edited)")
	if err != nil {
		t.Fatalf("UpdateComment: %v", err)
	}
	if up.ID != cm.ID || up.Body != "ralph was here (edited)" {
		t.Errorf("UpdateComment = %+v, want ID %d with the new body", up, cm.ID)
	}
	server := srv.Comments(n)
	if got, want := server[len(server)-1].Body, "ralph was here (edited)"; got != want {
		t.Errorf("server holds comment body %q, want %q", got, want)
	}

	if _, err := c.UpdateComment(ctx, 1, "x"); !errors.Is(err, ghapi.ErrNotFound) {
		t.Errorf("UpdateComment of a missing comment: error = %v, want ErrNotFound", err)
	}
}

func TestPulls(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()

	got, err := c.FindPull(ctx, "ralph/47-x", "main")
	if err != nil || got != nil {
		t.Fatalf("FindPull with no pull = %+v, %v; want nil, nil", got, err)
	}

	sha := branch(t, c, srv, "ralph/47-x")
	pr, err := c.CreatePull(ctx, ghapi.NewPull{Title: "Fix #47", Body: "Closes #47", Head: "ralph/47-x", Base: "main", Draft: true})
	if err != nil {
		t.Fatalf("CreatePull: %v", err)
	}
	if pr.Number == 0 || pr.Title != "Fix #47" || pr.Body != "Closes #47" || !pr.Draft || pr.State != "open" ||
		pr.Head.Ref != "ralph/47-x" || pr.Head.SHA != sha || pr.Base.Ref != "main" || pr.IsMerged() {
		t.Errorf("CreatePull = %+v", pr)
	}
	if diff := cmp.Diff([]githubtest.Pull{{Number: pr.Number, Title: "Fix #47", Body: "Closes #47", Head: "ralph/47-x",
		Base: "main", State: "open", Draft: true, HeadSHA: sha, Author: githubtest.BotLogin}}, srv.Pulls()); diff != "" {
		t.Errorf("server pulls (-want +got):\n%s", diff)
	}

	read, err := c.Pull(ctx, pr.Number)
	if err != nil {
		t.Fatalf("Pull: %v", err)
	}
	if diff := cmp.Diff(pr, read); diff != "" {
		t.Errorf("Pull differs from CreatePull's answer (-create +read):\n%s", diff)
	}

	found, err := c.FindPull(ctx, "ralph/47-x", "main")
	if err != nil || found == nil || found.Number != pr.Number {
		t.Fatalf("FindPull after CreatePull = %+v, %v; want #%d", found, err, pr.Number)
	}
	if other, err := c.FindPull(ctx, "ralph/47-x", "release"); err != nil || other != nil {
		t.Errorf("FindPull into another base = %+v, %v; want nil", other, err)
	}
	if anyBase, err := c.FindPull(ctx, "ralph/47-x", ""); err != nil || anyBase == nil || anyBase.Number != pr.Number {
		t.Errorf("FindPull with no base = %+v, %v; want #%d", anyBase, err, pr.Number)
	}

	// Closed and merged pulls are found too (state all), the newest first.
	srv.MergePull(pr.Number)
	merged, err := c.FindPull(ctx, "ralph/47-x", "main")
	if err != nil || merged == nil || merged.Number != pr.Number || !merged.IsMerged() || merged.State != "closed" {
		t.Fatalf("FindPull of a merged pull = %+v, %v; want #%d merged", merged, err, pr.Number)
	}
	second, err := c.CreatePull(ctx, ghapi.NewPull{Title: "Again", Head: "ralph/47-x", Base: "main"})
	if err != nil {
		t.Fatalf("second CreatePull: %v", err)
	}
	newest, err := c.FindPull(ctx, "ralph/47-x", "main")
	if err != nil || newest == nil || newest.Number != second.Number {
		t.Errorf("FindPull with two pulls = %+v, %v; want the newest, #%d", newest, err, second.Number)
	}

	if _, err := c.CreatePull(ctx, ghapi.NewPull{Title: "dup", Head: "ralph/47-x", Base: "main"}); err == nil {
		t.Error("CreatePull of a duplicate open pull: no error")
	}
	if _, err := c.Pull(ctx, 999); !errors.Is(err, ghapi.ErrNotFound) {
		t.Errorf("Pull(999) error = %v, want ErrNotFound", err)
	}
}

func TestPermission(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	for user, role := range map[string]string{
		"ada": "admin", "wes": "write", "max": "maintain", "tri": "triage", "rea": "read", "non": "none",
	} {
		srv.SetPermission(user, role)
	}
	tests := []struct{ user, want string }{
		{"ada", "admin"},
		{"wes", "write"},
		{"max", "maintain"}, // permission says write; role_name tells them apart
		{"tri", "triage"},
		{"rea", "read"},
		{"non", "none"},
		{"nobody-at-all", "none"}, // GitHub answers 404 for an unknown account
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			got, err := c.Permission(context.Background(), tt.user)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Permission(%q) = %q, want %q", tt.user, got, tt.want)
			}
		})
	}
}

func TestDispatchWorkflow(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()
	run, err := c.DispatchWorkflow(ctx, "ralph.yml", "main", map[string]string{"issue": "47", "step": "plan"})
	if err != nil {
		t.Fatalf("DispatchWorkflow: %v", err)
	}
	// return_run_details: the run is known at once, to link and to confirm.
	if got, err := c.WorkflowRun(ctx, run.ID); err != nil || got.Status != "queued" {
		t.Errorf("the dispatched run %+v: %+v, %v; want it queued", run, got, err)
	}
	if _, err := c.DispatchWorkflow(ctx, "ralph.yml", "main", nil); err != nil {
		t.Fatalf("DispatchWorkflow without inputs: %v", err)
	}
	want := []githubtest.Dispatch{
		{Workflow: "ralph.yml", Ref: "main", Inputs: map[string]any{"issue": "47", "step": "plan"}},
		{Workflow: "ralph.yml", Ref: "main"},
	}
	if diff := cmp.Diff(want, srv.Dispatches()); diff != "" {
		t.Errorf("dispatches (-want +got):\n%s", diff)
	}
	var ge *ghapi.Error
	if _, err := c.DispatchWorkflow(ctx, "ralph.yml", "no-such-branch", nil); !errors.As(err, &ge) || ge.Status != http.StatusUnprocessableEntity {
		t.Errorf("DispatchWorkflow on a missing ref: error = %v, want 422", err)
	}
}

func TestWorkflowRun(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()
	srv.SetWorkflowRun(77, "completed", "success")
	srv.SetWorkflowRun(78, "in_progress", "")
	tests := []struct {
		id   int64
		want ghapi.WorkflowRun
	}{
		{77, ghapi.WorkflowRun{ID: 77, Status: "completed", Conclusion: "success", HTMLURL: srv.ServerURL + "/octo/demo/actions/runs/77", DisplayTitle: "ralph", Path: ".github/workflows/ralph.yml", Event: "workflow_dispatch"}},
		{78, ghapi.WorkflowRun{ID: 78, Status: "in_progress", HTMLURL: srv.ServerURL + "/octo/demo/actions/runs/78", DisplayTitle: "ralph", Path: ".github/workflows/ralph.yml", Event: "workflow_dispatch"}},
	}
	for _, tt := range tests {
		got, err := c.WorkflowRun(ctx, tt.id)
		if err != nil {
			t.Fatalf("WorkflowRun(%d): %v", tt.id, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("WorkflowRun(%d) (-want +got):\n%s", tt.id, diff)
		}
		if got.HTMLURL != c.RunURL(tt.id) {
			t.Errorf("RunURL(%d) = %q, GitHub's html_url is %q", tt.id, c.RunURL(tt.id), got.HTMLURL)
		}
	}
	if _, err := c.WorkflowRun(ctx, 1); !errors.Is(err, ghapi.ErrNotFound) {
		t.Errorf("WorkflowRun of a missing run: error = %v, want ErrNotFound", err)
	}
}

func TestRefs(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c := newClient(t, srv)
	ctx := context.Background()
	main, err := c.GetRef(ctx, "heads/main")
	if err != nil {
		t.Fatalf("GetRef heads/main: %v", err)
	}
	if main.Ref != "refs/heads/main" || main.Object.Type != "commit" || len(main.Object.SHA) != 40 {
		t.Fatalf("GetRef heads/main = %+v", main)
	}
	first := commit(t, srv, main.Object.SHA, "first")
	second := commit(t, srv, first, "second")

	for _, ref := range []string{"heads/ralph/47-x", "ralph/locks/47"} {
		t.Run(ref, func(t *testing.T) {
			if _, err := c.GetRef(ctx, ref); !errors.Is(err, ghapi.ErrNotFound) {
				t.Fatalf("GetRef before create: error = %v, want ErrNotFound", err)
			}
			if err := c.CreateRef(ctx, "refs/"+ref, first); err != nil {
				t.Fatalf("CreateRef: %v", err)
			}
			// The second create is the lost race of a compare-and-swap.
			err := c.CreateRef(ctx, "refs/"+ref, second)
			var ge *ghapi.Error
			if !errors.As(err, &ge) || ge.Status != http.StatusUnprocessableEntity {
				t.Fatalf("second CreateRef: error = %v, want *ghapi.Error with status 422", err)
			}
			if errors.Is(err, ghapi.ErrNotFound) {
				t.Errorf("a 422 is ErrNotFound: %v", err)
			}
			assertRef(t, c, ref, first)

			if err := c.UpdateRef(ctx, ref, second, false); err != nil {
				t.Fatalf("UpdateRef fast-forward: %v", err)
			}
			assertRef(t, c, ref, second)
			if err := c.UpdateRef(ctx, ref, first, false); err == nil {
				t.Fatal("UpdateRef backwards without force: no error")
			}
			assertRef(t, c, ref, second)
			if err := c.UpdateRef(ctx, "refs/"+ref, first, true); err != nil {
				t.Fatalf("UpdateRef with force (and a refs/ prefix): %v", err)
			}
			assertRef(t, c, ref, first)

			if err := c.DeleteRef(ctx, ref); err != nil {
				t.Fatalf("DeleteRef: %v", err)
			}
			if _, err := c.GetRef(ctx, ref); !errors.Is(err, ghapi.ErrNotFound) {
				t.Errorf("GetRef after delete: error = %v, want ErrNotFound", err)
			}
			if err := c.DeleteRef(ctx, ref); err != nil {
				t.Errorf("DeleteRef of a ref already gone: %v, want nil", err)
			}
		})
	}

	// The server saw each slash-separated segment as part of one {ref}, not escaped into %2F.
	for _, r := range srv.Requests() {
		if strings.Contains(r.Path, "%2F") {
			t.Errorf("%s %s: a ref's slashes were escaped", r.Method, r.Path)
		}
	}
}

func assertRef(t *testing.T, c *ghapi.Client, ref, sha string) {
	t.Helper()
	got, err := c.GetRef(context.Background(), ref)
	if err != nil {
		t.Fatalf("GetRef %s: %v", ref, err)
	}
	if got.Ref != "refs/"+ref || got.Object.SHA != sha {
		t.Errorf("GetRef %s = %s at %s, want refs/%s at %s", ref, got.Ref, got.Object.SHA, ref, sha)
	}
}

func TestWebURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		server string
		got    func(c *ghapi.Client) string
		want   string
	}{
		{"blob", "https://github.com", func(c *ghapi.Client) string { return c.BlobURL("ralph/47-x", "docs/plan.md") },
			"https://github.com/octo/demo/blob/ralph/47-x/docs/plan.md"},
		{"blob refs prefix", "https://github.com", func(c *ghapi.Client) string { return c.BlobURL("refs/heads/main", "README.md") },
			"https://github.com/octo/demo/blob/heads/main/README.md"},
		{"blob escaped", "https://github.com", func(c *ghapi.Client) string { return c.BlobURL("a#b", "x.md") },
			"https://github.com/octo/demo/blob/a%23b/x.md"},
		{"run", "https://github.com", func(c *ghapi.Client) string { return c.RunURL(123456789012) },
			"https://github.com/octo/demo/actions/runs/123456789012"},
		{"tree", "https://github.com", func(c *ghapi.Client) string { return c.TreeURL("ralph/47-x") },
			"https://github.com/octo/demo/tree/ralph/47-x"},
		{"tree enterprise", "https://ghe.example.com:8443", func(c *ghapi.Client) string { return c.TreeURL("main") },
			"https://ghe.example.com:8443/octo/demo/tree/main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ghapi.New(ghapi.Options{Endpoints: ghapi.ForHost(strings.TrimPrefix(tt.server, "https://")),
				Token: "t", Owner: "octo", Repo: "demo", Transport: http.DefaultTransport})
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.got(c); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestViewer: the token's account, from GraphQL, whatever kind of token it is.
func TestViewer(t *testing.T) {
	t.Parallel()
	for _, login := range []string{"", "ralph-app[bot]", "octo-ralph"} {
		srv := githubtest.New(t, githubtest.Options{TokenLogin: login})
		got, err := newClient(t, srv).Viewer(context.Background())
		want := login
		if want == "" {
			want = githubtest.BotLogin
		}
		if err != nil || got != want {
			t.Errorf("Viewer() = %q, %v; want %q", got, err, want)
		}
	}
}
