package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// hub is the GitHub test server (internal/githubtest) as a flow test sets it up and reads it; the engine
// speaks to it through ghapi.Client, as ralph does. The people who file and label issues are alice.
type hub struct {
	t      *testing.T // the test that set it up, told of a helper's misuse
	srv    *githubtest.Server
	client *ghapi.Client
	mark   int // the requests before it are forgotten (resetLog)

	mu     sync.Mutex
	faults []hubFault // what failCall and failCallAfter asked for, in order
	refuse func(body string) int
}

// hubFault is one answer of GitHub's a test asked for (failCall, failCallAfter): to the request of call after skip more of them.
type hubFault struct {
	call   string
	skip   int
	status int
	after  bool // the request is done first
}

// newHub starts a test server for octo/widgets whose token writes as ralphAs, and ralph's client of it.
func newHub(t *testing.T) *hub {
	t.Helper()
	srv := githubtest.New(t, githubtest.Options{Owner: "octo", Repo: "widgets", TokenLogin: ralphAs})
	srv.SetPermission("alice", "write")
	c, err := ghapi.New(ghapi.Options{
		Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token:     "test-token", Owner: "octo", Repo: "widgets", Transport: srv.Client().Transport,
		// One try: an error a test makes GitHub answer reaches the engine as it is (ghapi's tests see its
		// retries).
		Retry: ghapi.Retry{Attempts: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	g := &hub{t: t, srv: srv, client: c}
	srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		status := g.fault(r.Method, r.URL.EscapedPath(), false)
		if status == 0 {
			status = g.refused(r)
		}
		if status == 0 {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"message": %q}`, http.StatusText(status))
		return true
	})
	srv.ReplaceResponse(func(method, path string, _ int) int { return g.fault(method, path, true) })
	return g
}

// fault is the status to answer a request with, from the first fault that matches it (0: none).
func (g *hub) fault(method, path string, after bool) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, f := range g.faults {
		want := callRequests[f.call]
		if f.after != after || method != want.method || !want.path.MatchString(path) {
			continue
		}
		if f.skip > 0 {
			g.faults[i].skip--
			return 0
		}
		g.faults = slices.Delete(g.faults, i, i+1)
		return f.status
	}
	return 0
}

// failCall makes GitHub answer status to one of ralph's calls (callRequests), the one after the next
// skip, without doing anything.
func (g *hub) failCall(call string, skip, status int) {
	g.addFault(hubFault{call, skip, status, false})
}

// failCallAfter is failCall for a call GitHub does before it answers status (the answer was lost).
func (g *hub) failCallAfter(call string, skip, status int) {
	g.addFault(hubFault{call, skip, status, true})
}

func (g *hub) addFault(f hubFault) {
	if _, ok := callRequests[f.call]; !ok {
		g.t.Fatalf("hub: no request known for call %s", f.call)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.faults = append(g.faults, f)
}

// web is the repository's web page, where the links ralph writes point.
func (g *hub) web() string { return g.srv.ServerURL + "/octo/widgets" }

// addIssue opens an issue by alice, with labels (each added by her).
func (g *hub) addIssue(title, body string, labels ...string) int {
	return g.srv.CreateIssue("alice", title, body, labels...)
}

// comment posts a comment on issue n as login.
func (g *hub) comment(n int, login, body string) ghapi.Comment {
	c := g.srv.AddComment(n, login, body)
	return commentOf(c)
}

// setLabels sets an issue's labels as alice would.
func (g *hub) setLabels(n int, labels ...string) {
	for _, l := range g.srv.Labels(n) {
		if !slices.Contains(labels, l) {
			g.srv.RemoveLabel(n, l, "alice")
		}
	}
	have := g.srv.Labels(n)
	for _, l := range labels {
		if !slices.Contains(have, l) {
			g.srv.AddLabel(n, l, "alice")
		}
	}
}

// close closes an issue as a person would (reason "completed" or "not_planned").
func (g *hub) close(n int, reason string) { g.srv.CloseIssueAs(n, reason) }

// labels are issue n's labels.
func (g *hub) labels(n int) []string { return g.srv.Labels(n) }

// stateLabels are issue n's state labels.
func (g *hub) stateLabels(n int) []workflow.State { return workflow.StatesFromLabels(g.labels(n)) }

// allComments are issue n's comments, oldest first.
func (g *hub) allComments(n int) []ghapi.Comment {
	var out []ghapi.Comment
	for _, c := range g.srv.Comments(n) {
		out = append(out, commentOf(c))
	}
	return out
}

func commentOf(c githubtest.Comment) ghapi.Comment {
	typ := "User"
	if strings.HasSuffix(c.User, "[bot]") {
		typ = "Bot"
	}
	return ghapi.Comment{ID: c.ID, Body: c.Body, User: ghapi.User{Login: c.User, Type: typ}}
}

// commentsStarting lists the bodies of issue n's comments that start with prefix.
func (g *hub) commentsStarting(n int, prefix string) []string {
	var out []string
	for _, c := range g.srv.Comments(n) {
		if strings.HasPrefix(c.Body, prefix) {
			out = append(out, c.Body)
		}
	}
	return out
}

// record is ralph's record of issue n, read from its one status comment.
func (g *hub) record(t *testing.T, n int) engine.Record {
	t.Helper()
	return recordOf(t, n, g.commentsStarting(n, record.StatusMarker))
}

// statusBody is the body of issue n's status comment ("" when there is none).
func (g *hub) statusBody(n int) string {
	if st := g.commentsStarting(n, record.StatusMarker); len(st) > 0 {
		return st[0]
	}
	return ""
}

// writeCount counts the requests since the last resetLog that could change something (a REST request
// other than GET, a GraphQL mutation).
func (g *hub) writeCount() int {
	n := 0
	for _, r := range g.srv.Requests()[g.mark:] {
		if r.Write() {
			n++
		}
	}
	return n
}

// resetLog forgets the requests so far (writeCount, count, writes, callsOf).
func (g *hub) resetLog() { g.mark = len(g.srv.Requests()) }

// recordOf parses ralph's record from an issue's status comments, of which there must be one.
func recordOf(t *testing.T, n int, status []string) engine.Record {
	t.Helper()
	if len(status) != 1 {
		t.Fatalf("#%d has %d status comments, want 1", n, len(status))
	}
	rec, ok, err := record.Parse(status[0])
	if err != nil || !ok {
		t.Fatalf("#%d: ParseRecord = %v, %v", n, ok, err)
	}
	return rec
}

// pull is pull request n as the server holds it (nil when there is none).
func (g *hub) pull(n int) *ghapi.PullRequest {
	for _, p := range g.srv.Pulls() {
		if p.Number != n {
			continue
		}
		pr := &ghapi.PullRequest{Number: p.Number, Title: p.Title, Body: p.Body, State: p.State, Draft: p.Draft,
			Merged: p.Merged, User: ghapi.User{Login: p.Author},
			HTMLURL: fmt.Sprintf("%s/pull/%d", g.web(), p.Number)}
		pr.Head.Ref, pr.Head.SHA, pr.Base.Ref = p.Head, p.HeadSHA, p.Base
		return pr
	}
	return nil
}

// mergePull merges pull request n, as a person would.
func (g *hub) mergePull(n int) { g.srv.MergePull(n) }

// callRequests are the requests ghapi.Client makes for the calls count counts.
var callRequests = map[string]struct {
	method string
	path   *regexp.Regexp
}{
	"CreatePull":    {http.MethodPost, regexp.MustCompile(`^/repos/octo/widgets/pulls$`)},
	"CreateIssue":   {http.MethodPost, regexp.MustCompile(`^/repos/octo/widgets/issues$`)},
	"AddSubIssue":   {http.MethodPost, regexp.MustCompile(`^/repos/octo/widgets/issues/[0-9]+/sub_issues$`)},
	"CreateComment": {http.MethodPost, regexp.MustCompile(`^/repos/octo/widgets/issues/[0-9]+/comments$`)},
	"UpdateComment": {http.MethodPatch, regexp.MustCompile(`^/repos/octo/widgets/issues/comments/[0-9]+$`)},
	"AddBlockedBy":  {http.MethodPost, regexp.MustCompile(`^/repos/octo/widgets/issues/[0-9]+/dependencies/blocked_by$`)},
	// What a sweep reads.
	"Issues":       {http.MethodGet, regexp.MustCompile(`^/repos/octo/widgets/issues$`)},
	"BlockedBy":    {http.MethodGet, regexp.MustCompile(`^/repos/octo/widgets/issues/[0-9]+/dependencies/blocked_by$`)},
	"LabeledBy":    {http.MethodGet, regexp.MustCompile(`^/repos/octo/widgets/issues/[0-9]+/events$`)},
	"MatchingRefs": {http.MethodGet, regexp.MustCompile(`^/repos/octo/widgets/git/matching-refs/`)},
	// IssueWithComments is one GraphQL query.
	"IssueWithComments": {http.MethodPost, regexp.MustCompile(`^/graphql$`)},
}

// count counts the requests since the last resetLog of one of ralph's calls (callRequests).
func (g *hub) count(call string) int {
	want, ok := callRequests[call]
	if !ok {
		g.t.Fatalf("hub: no request known for call %s", call)
	}
	n := 0
	for _, r := range g.srv.Requests()[g.mark:] {
		if r.Method == want.method && want.path.MatchString(r.Path) {
			n++
		}
	}
	return n
}

// writes describes the requests since the last resetLog that could change something, for a message.
func (g *hub) writes() string {
	var out []string
	for _, r := range g.srv.Requests()[g.mark:] {
		if r.Write() {
			out = append(out, strings.TrimSpace(r.Method+" "+r.Path+" "+r.Operation))
		}
	}
	return strings.Join(out, ", ")
}

// refuseComments makes GitHub answer refuse's status (0: take it) to each comment's creation or edit,
// by its body, without making it.
func (g *hub) refuseComments(refuse func(body string) int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refuse = refuse
}

// refused is refuseComments' answer to r (0: none), which it reads the body of and leaves to the handler.
func (g *hub) refused(r *http.Request) int {
	g.mu.Lock()
	refuse := g.refuse
	g.mu.Unlock()
	if refuse == nil {
		return 0
	}
	isComment := false
	for _, call := range []string{"CreateComment", "UpdateComment"} {
		want := callRequests[call]
		isComment = isComment || r.Method == want.method && want.path.MatchString(r.URL.EscapedPath())
	}
	if !isComment {
		return 0
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return http.StatusBadRequest
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var c struct {
		Body string `json:"body"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return 0 // the server says what is wrong with it
	}
	return refuse(c.Body)
}

// closePull closes pull request n unmerged, as a person would.
func (g *hub) closePull(n int) { g.srv.ClosePull(n) }

// pullCount counts the repository's pull requests.
func (g *hub) pullCount() int { return len(g.srv.Pulls()) }

// labelBuildBy makes actor the one who last added ralph:build to issue n.
func (g *hub) labelBuildBy(n int, actor string) {
	if slices.Contains(g.srv.Labels(n), workflow.LabelBuild) {
		g.srv.RemoveLabel(n, workflow.LabelBuild, actor)
	}
	g.srv.AddLabel(n, workflow.LabelBuild, actor)
}

// nodeID is issue n's GraphQL node id, as ralph reads it.
func (g *hub) nodeID(n int) string {
	is, err := g.client.Issue(context.Background(), n)
	if err != nil {
		g.t.Fatalf("hub: issue #%d: %v", n, err)
	}
	return is.NodeID
}

// enrolledPull opens a pull request carrying ralph:build, as alice would, and returns its number.
func (g *hub) enrolledPull(title string) int {
	g.srv.PushCommit("feature", "alice", title, map[string]string{"feature.txt": "a feature\n"})
	pr, err := g.client.CreatePull(context.Background(), ghapi.NewPull{Title: title, Head: "feature", Base: "main"})
	if err != nil {
		g.t.Fatalf("hub: open a pull request: %v", err)
	}
	g.srv.AddLabel(pr.Number, workflow.LabelBuild, "alice")
	return pr.Number
}

// readWithRoleOf lists the logins whose role on the repository ralph's GraphQL queries asked for.
func (g *hub) readWithRoleOf() []string {
	var out []string
	for _, r := range g.srv.GraphQLRequests() {
		if login, ok := r.Variables["login"].(string); ok && strings.Contains(r.Query, "collaborators(login: $login") {
			out = append(out, login)
		}
	}
	return out
}

// callsOf describes the requests since the last resetLog of ralph's calls named, for a message.
func (g *hub) callsOf(calls ...string) []string {
	var out []string
	for _, r := range g.srv.Requests()[g.mark:] {
		for _, call := range calls {
			want, ok := callRequests[call]
			if !ok {
				g.t.Fatalf("hub: no request known for call %s", call)
			}
			if r.Method == want.method && want.path.MatchString(r.Path) {
				out = append(out, call+" "+r.Path)
			}
		}
	}
	return out
}

// issue is issue n as the server holds it.
func (g *hub) issue(n int) ghapi.Issue {
	is := g.srv.Issue(n)
	out := ghapi.Issue{Number: is.Number, Title: is.Title, Body: is.Body, State: is.State, StateReason: is.StateReason,
		User: ghapi.User{Login: is.Author}}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, ghapi.Label{Name: l})
	}
	return out
}

// issueBy opens an issue by author, with labels (each added by author).
func (g *hub) issueBy(author, title, body string, labels ...string) int {
	return g.srv.CreateIssue(author, title, body, labels...)
}

// editComment changes comment id's body, as its author would.
func (g *hub) editComment(id int64, body string) { g.srv.EditComment(id, body) }
