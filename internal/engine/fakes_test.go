package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/ledger"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestMain lets this test binary be the sandbox's supervisor: verify commands run through it, as the
// released binary's main does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.SupervisorCommand {
		os.Exit(sandbox.SupervisorMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// The fake GitHub's repository and the account ralph writes as.
const (
	repoURL = "https://github.com/octo/widgets"
	ralphAs = engine.ActionsBot
)

var ralphUser = ghapi.User{Login: ralphAs, ID: 41898282, Type: "Bot"}

// call is one request the fake GitHub answered (or refused with a fault).
type call struct {
	Method string
	Issue  int    // the issue (or pull request, or comment id for UpdateComment) the call is about
	Arg    string // what it wrote: a label list, a comment body, a title
	Err    error
}

// writes are the methods that change something on GitHub.
var writeMethods = map[string]bool{
	"AddLabels": true, "SetLabels": true, "CreateIssue": true, "AddSubIssue": true, "AddBlockedBy": true,
	"RemoveLabel": true, "CreateComment": true, "UpdateComment": true, "CreatePull": true,
}

// fault is an error the fake gives instead of answering (after, when the write is done first: GitHub
// did the work and the answer was lost).
type fault struct {
	err   error
	after bool
	skip  int // calls to let through before this fault
}

// fakeGitHub is GitHub in memory: issues with labels, comments with authors, pull requests, sub-issues and
// dependencies. It implements engine.GitHub and engine.Lister.
type fakeGitHub struct {
	mu       sync.Mutex
	issues   map[int]*ghapi.Issue
	comments map[int][]ghapi.Comment
	pulls    []*ghapi.PullRequest
	subs     map[int][]int // parent → sub-issues
	blockers map[int][]int // issue → the issues that block it
	labeler  map[int]string
	locks    []string // refs under refs/ralph/locks/
	next     int      // the next issue or pull request number
	nextID   int64
	faults   map[string][]fault
	log      []call
	// refuseEdit, when set, answers a comment's creation or edit with its error instead of making it
	// (GitHub refusing a status comment, say).
	refuseEdit func(body string) error
}

var (
	_ engine.GitHub = (*fakeGitHub)(nil)
	_ engine.Lister = (*fakeGitHub)(nil)
)

func newFakeGitHub() *fakeGitHub {
	return &fakeGitHub{
		issues: map[int]*ghapi.Issue{}, comments: map[int][]ghapi.Comment{}, subs: map[int][]int{},
		blockers: map[int][]int{}, labeler: map[int]string{}, next: 1, nextID: 1000, faults: map[string][]fault{},
	}
}

// addIssue opens an issue with labels, as a person would.
func (g *fakeGitHub) addIssue(title, body string, labels ...string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.addIssueLocked(title, body, "alice", labels)
}

func (g *fakeGitHub) addIssueLocked(title, body, author string, labels []string) int {
	n := g.next
	g.next++
	g.nextID++
	is := &ghapi.Issue{
		ID: g.nextID, NodeID: fmt.Sprintf("I_%d", n), Number: n, Title: title, Body: body, State: "open",
		HTMLURL: fmt.Sprintf("%s/issues/%d", repoURL, n), User: ghapi.User{Login: author, Type: "User"},
	}
	for _, l := range labels {
		is.Labels = append(is.Labels, ghapi.Label{Name: l})
	}
	g.issues[n] = is
	if slices.Contains(labels, workflow.LabelBuild) {
		g.labeler[n] = author
	}
	return n
}

func (g *fakeGitHub) web() string { return repoURL }

func (g *fakeGitHub) mergePull(n int) {
	g.setPull(n, func(p *ghapi.PullRequest) { p.State, p.Merged = "closed", true })
}

func (g *fakeGitHub) count(call string) int { return len(g.calls(call)) }

func (g *fakeGitHub) failCall(call string, skip, status int) { g.failNth(call, skip, ghError(status)) }

func (g *fakeGitHub) failCallAfter(call string, skip, status int) {
	g.failAfterNth(call, skip, ghError(status))
}

func (g *fakeGitHub) refuseComments(refuse func(body string) int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refuseEdit = func(body string) error {
		if code := refuse(body); code != 0 {
			return ghError(code)
		}
		return nil
	}
}

func (g *fakeGitHub) closePull(n int) {
	g.setPull(n, func(p *ghapi.PullRequest) { p.State = "closed" })
}

func (g *fakeGitHub) pullCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pulls)
}

func (g *fakeGitHub) labelBuildBy(n int, actor string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.labeler[n] = actor
}

func (g *fakeGitHub) nodeID(n int) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.issues[n].NodeID
}

func (g *fakeGitHub) enrolledPull(title string) int {
	n := g.addIssue(title, "", workflow.LabelBuild)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.issues[n].PullRequest = &struct {
		URL string `json:"url"`
	}{URL: "x"}
	return n
}

func (g *fakeGitHub) callsOf(calls ...string) []string {
	var out []string
	for _, c := range g.calls(calls...) {
		out = append(out, fmt.Sprintf("%+v", c))
	}
	return out
}

func (g *fakeGitHub) issue(n int) ghapi.Issue {
	g.mu.Lock()
	defer g.mu.Unlock()
	return *g.issues[n]
}

func (g *fakeGitHub) issueBy(author, title, body string, labels ...string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.addIssueLocked(title, body, author, labels)
}

func (g *fakeGitHub) editComment(id int64, body string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for n, cs := range g.comments {
		for i := range cs {
			if cs[i].ID == id {
				g.comments[n][i].Body = body
			}
		}
	}
}

func (g *fakeGitHub) writes() string { return fmt.Sprintf("%+v", g.calls()) }

// comment posts a comment as login (not a write of ralph's: it is not logged).
func (g *fakeGitHub) comment(n int, login, body string) ghapi.Comment {
	g.mu.Lock()
	defer g.mu.Unlock()
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return g.addCommentLocked(n, ghapi.User{Login: login, Type: typ}, body)
}

func (g *fakeGitHub) addCommentLocked(n int, u ghapi.User, body string) ghapi.Comment {
	g.nextID++
	c := ghapi.Comment{ID: g.nextID, Body: body, User: u, HTMLURL: fmt.Sprintf("%s/issues/%d#issuecomment-%d", repoURL, n, g.nextID)}
	g.comments[n] = append(g.comments[n], c)
	return c
}

// setLabels sets an issue's labels as a person would (not logged).
func (g *fakeGitHub) setLabels(n int, labels ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.issues[n].Labels = nil
	for _, l := range labels {
		g.issues[n].Labels = append(g.issues[n].Labels, ghapi.Label{Name: l})
	}
}

// close closes an issue (reason "completed" or "not_planned").
func (g *fakeGitHub) close(n int, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.issues[n].State, g.issues[n].StateReason = "closed", reason
}

// fail makes the next call of method fail with err, without doing anything.
func (g *fakeGitHub) fail(method string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.faults[method] = append(g.faults[method], fault{err: err})
}

// refused is GitHub's answer to a comment's body it does not take: longer than its limit, or what
// refuseEdit refuses.
func (g *fakeGitHub) refused(body string) error {
	if n := utf8.RuneCountInString(body); n > engine.MaxBody {
		return &ghapi.Error{Method: "PATCH", Status: 422, Message: "Validation Failed", Details: []string{fmt.Sprintf("body is too long (maximum is %d characters; it is %d)", engine.MaxBody, n)}}
	}
	if g.refuseEdit != nil {
		return g.refuseEdit(body)
	}
	return nil
}

// failNth is fail for the call after the next skip calls of method.
func (g *fakeGitHub) failNth(method string, skip int, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.faults[method] = append(g.faults[method], fault{err: err, skip: skip})
}

// failAfterNth is failAfter for the call after the next skip calls of method.
func (g *fakeGitHub) failAfterNth(method string, skip int, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.faults[method] = append(g.faults[method], fault{err: err, after: true, skip: skip})
}

// ghError is an error answer from GitHub with that HTTP status.
func ghError(code int) error {
	return &ghapi.Error{Method: "POST", Path: "/repos/octo/widgets/...", Status: code, Message: http5xx(code)}
}

func http5xx(code int) string {
	switch code {
	case 422:
		return "Validation Failed"
	case 404:
		return "Not Found"
	}
	return "Server Error"
}

// enter logs the call and returns the fault to give, if one is set for method.
func (g *fakeGitHub) enter(method string, n int, arg string) (fault, bool) {
	f, ok := fault{}, false
	if q := g.faults[method]; len(q) > 0 {
		if q[0].skip > 0 {
			q[0].skip--
		} else {
			f, ok = q[0], true
			g.faults[method] = q[1:]
		}
	}
	c := call{Method: method, Issue: n, Arg: arg}
	if ok {
		c.Err = f.err
	}
	g.log = append(g.log, c)
	return f, ok
}

// calls lists the calls made so far (of the methods named, or all).
func (g *fakeGitHub) calls(methods ...string) []call {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []call
	for _, c := range g.log {
		if len(methods) == 0 || slices.Contains(methods, c.Method) {
			out = append(out, c)
		}
	}
	return out
}

// writeCount counts the calls that change something.
func (g *fakeGitHub) writeCount() int {
	n := 0
	for _, c := range g.calls() {
		if writeMethods[c.Method] {
			n++
		}
	}
	return n
}

// resetLog forgets the calls so far.
func (g *fakeGitHub) resetLog() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.log = nil
}

// labels of issue n.
func (g *fakeGitHub) labels(n int) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.issues[n].LabelNames()
}

// stateLabels of issue n.
func (g *fakeGitHub) stateLabels(n int) []workflow.State {
	return workflow.StatesFromLabels(g.labels(n))
}

// allComments of issue n.
func (g *fakeGitHub) allComments(n int) []ghapi.Comment {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]ghapi.Comment(nil), g.comments[n]...)
}

// commentsStarting lists the bodies of issue n's comments that start with prefix.
func (g *fakeGitHub) commentsStarting(n int, prefix string) []string {
	var out []string
	for _, c := range g.allComments(n) {
		if strings.HasPrefix(c.Body, prefix) {
			out = append(out, c.Body)
		}
	}
	return out
}

// record is ralph's record of issue n, read from its one status comment.
func (g *fakeGitHub) record(t *testing.T, n int) engine.Record {
	t.Helper()
	return recordOf(t, n, g.commentsStarting(n, engine.StatusMarker))
}

// statusBody is the body of issue n's status comment ("" when there is none).
func (g *fakeGitHub) statusBody(n int) string {
	st := g.commentsStarting(n, engine.StatusMarker)
	if len(st) == 0 {
		return ""
	}
	return st[0]
}

// pull returns the pull request numbered n.
func (g *fakeGitHub) pull(n int) *ghapi.PullRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.pulls {
		if p.Number == n {
			return p
		}
	}
	return nil
}

// setPull changes pull request n as a person would (merge, close).
func (g *fakeGitHub) setPull(n int, change func(p *ghapi.PullRequest)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.pulls {
		if p.Number == n {
			change(p)
		}
	}
}

// IssueWithComments is Issue and Comments (each faultable and logged under its own name), as the one
// GraphQL query ghapi sends answers both.
func (g *fakeGitHub) IssueWithComments(ctx context.Context, n int) (ghapi.Issue, []ghapi.Comment, error) {
	is, err := g.Issue(ctx, n)
	if err != nil {
		return is, nil, err
	}
	cs, err := g.Comments(ctx, n)
	return is, cs, err
}

func (g *fakeGitHub) Issue(_ context.Context, n int) (ghapi.Issue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.enter("Issue", n, ""); ok {
		return ghapi.Issue{}, f.err
	}
	is, ok := g.issues[n]
	if !ok {
		return ghapi.Issue{}, &ghapi.Error{Method: "GET", Path: fmt.Sprintf("/repos/octo/widgets/issues/%d", n), Status: 404, Message: "Not Found"}
	}
	c := *is
	c.Labels = slices.Clone(is.Labels)
	return c, nil
}

func (g *fakeGitHub) AddLabels(_ context.Context, n int, labels ...string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.enter("AddLabels", n, strings.Join(labels, ","))
	if ok && !f.after {
		return f.err
	}
	is := g.issues[n]
	for _, l := range labels {
		if !slices.Contains(is.LabelNames(), l) {
			is.Labels = append(is.Labels, ghapi.Label{Name: l})
		}
	}
	return f.err
}

func (g *fakeGitHub) SetLabels(_ context.Context, n int, labels []string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.enter("SetLabels", n, strings.Join(labels, ","))
	if ok && !f.after {
		return f.err
	}
	is := g.issues[n]
	is.Labels = nil
	for _, l := range labels {
		is.Labels = append(is.Labels, ghapi.Label{Name: l})
	}
	return f.err
}

func (g *fakeGitHub) RemoveLabel(_ context.Context, n int, label string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.enter("RemoveLabel", n, label)
	if ok && !f.after {
		return f.err
	}
	is := g.issues[n]
	is.Labels = slices.DeleteFunc(is.Labels, func(l ghapi.Label) bool { return l.Name == label })
	return f.err
}

func (g *fakeGitHub) Issues(_ context.Context, flt ghapi.IssueFilter) ([]ghapi.Issue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.enter("Issues", 0, flt.State); ok {
		return nil, f.err
	}
	var out []ghapi.Issue
	for n := 1; n < g.next; n++ {
		is, ok := g.issues[n]
		if !ok || (flt.State != "all" && flt.State != "" && is.State != flt.State) {
			continue
		}
		all := true
		for _, l := range flt.Labels {
			all = all && slices.Contains(is.LabelNames(), l)
		}
		if all {
			c := *is
			c.Labels = slices.Clone(is.Labels)
			out = append(out, c)
		}
	}
	return out, nil
}

func (g *fakeGitHub) CreateIssue(_ context.Context, ni ghapi.NewIssue) (ghapi.Issue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.enter("CreateIssue", 0, ni.Title)
	if ok && !f.after {
		return ghapi.Issue{}, f.err
	}
	n := g.addIssueLocked(ni.Title, ni.Body, ralphAs, ni.Labels)
	g.issues[n].User = ralphUser
	return *g.issues[n], f.err
}

func (g *fakeGitHub) SubIssues(_ context.Context, n int) ([]ghapi.Issue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.enter("SubIssues", n, ""); ok {
		return nil, f.err
	}
	var out []ghapi.Issue
	for _, k := range g.subs[n] {
		c := *g.issues[k]
		c.Labels = slices.Clone(g.issues[k].Labels)
		out = append(out, c)
	}
	return out, nil
}

func (g *fakeGitHub) byID(id int64) int {
	for n, is := range g.issues {
		if is.ID == id {
			return n
		}
	}
	return 0
}

func (g *fakeGitHub) AddSubIssue(_ context.Context, n int, childID int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	child := g.byID(childID)
	f, ok := g.enter("AddSubIssue", n, fmt.Sprint(child))
	if ok && !f.after {
		return f.err
	}
	if child == 0 {
		return ghError(422)
	}
	g.subs[n] = append(g.subs[n], child)
	return f.err
}

func (g *fakeGitHub) AddBlockedBy(_ context.Context, n int, blockerID int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.byID(blockerID)
	f, ok := g.enter("AddBlockedBy", n, fmt.Sprint(b))
	if ok && !f.after {
		return f.err
	}
	if slices.Contains(g.blockers[n], b) {
		return &ghapi.Error{Status: 422, Message: "Dependency already exists"}
	}
	g.blockers[n] = append(g.blockers[n], b)
	return f.err
}

func (g *fakeGitHub) BlockedBy(_ context.Context, n int) ([]ghapi.Issue, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.enter("BlockedBy", n, ""); ok {
		return nil, f.err
	}
	var out []ghapi.Issue
	for _, b := range g.blockers[n] {
		out = append(out, *g.issues[b])
	}
	return out, nil
}

func (g *fakeGitHub) Comments(_ context.Context, n int) ([]ghapi.Comment, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.enter("Comments", n, ""); ok {
		return nil, f.err
	}
	return append([]ghapi.Comment(nil), g.comments[n]...), nil
}

func (g *fakeGitHub) CreateComment(_ context.Context, n int, body string) (ghapi.Comment, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.enter("CreateComment", n, body)
	if ok && !f.after {
		return ghapi.Comment{}, f.err
	}
	if err := g.refused(body); err != nil {
		return ghapi.Comment{}, err
	}
	c := g.addCommentLocked(n, ralphUser, body)
	if ok {
		return ghapi.Comment{}, f.err
	}
	return c, nil
}

func (g *fakeGitHub) UpdateComment(_ context.Context, id int64, body string) (ghapi.Comment, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.enter("UpdateComment", int(id), body)
	if ok && !f.after {
		return ghapi.Comment{}, f.err
	}
	if err := g.refused(body); err != nil {
		return ghapi.Comment{}, err
	}
	for n, cs := range g.comments {
		for i := range cs {
			if cs[i].ID == id {
				cs[i].Body = body
				g.comments[n] = cs
				return cs[i], f.err
			}
		}
	}
	return ghapi.Comment{}, &ghapi.Error{Method: "PATCH", Status: 404, Message: "Not Found"}
}

func (g *fakeGitHub) FindPull(_ context.Context, head, base string) (*ghapi.PullRequest, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.enter("FindPull", 0, head); ok {
		return nil, f.err
	}
	var best *ghapi.PullRequest
	for _, p := range g.pulls {
		if p.Head.Ref == head && (base == "" || p.Base.Ref == base) && (best == nil || p.Number > best.Number) {
			best = p
		}
	}
	if best == nil {
		return nil, nil
	}
	c := *best
	return &c, nil
}

func (g *fakeGitHub) Pull(_ context.Context, n int) (ghapi.PullRequest, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.enter("Pull", n, ""); ok {
		return ghapi.PullRequest{}, f.err
	}
	for _, p := range g.pulls {
		if p.Number == n {
			return *p, nil
		}
	}
	return ghapi.PullRequest{}, &ghapi.Error{Method: "GET", Status: 404, Message: "Not Found"}
}

func (g *fakeGitHub) CreatePull(_ context.Context, np ghapi.NewPull) (ghapi.PullRequest, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.enter("CreatePull", 0, np.Title)
	if ok && !f.after {
		return ghapi.PullRequest{}, f.err
	}
	for _, p := range g.pulls {
		if p.Head.Ref == np.Head && p.Base.Ref == np.Base && p.State == "open" {
			return ghapi.PullRequest{}, &ghapi.Error{Method: "POST", Status: 422, Message: "Validation Failed", Details: []string{"A pull request already exists for octo:" + np.Head + "."}}
		}
	}
	n := g.next
	g.next++
	p := &ghapi.PullRequest{Number: n, Title: np.Title, Body: np.Body, State: "open", Draft: np.Draft, HTMLURL: fmt.Sprintf("%s/pull/%d", repoURL, n)}
	p.Head.Ref, p.Base.Ref = np.Head, np.Base
	g.pulls = append(g.pulls, p)
	return *p, f.err
}

func (g *fakeGitHub) BlobURL(branch, path string) string {
	return fmt.Sprintf("%s/blob/%s/%s", repoURL, branch, path)
}

func (g *fakeGitHub) TreeURL(branch string) string { return fmt.Sprintf("%s/tree/%s", repoURL, branch) }

func (g *fakeGitHub) LabeledBy(_ context.Context, n int, label string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.enter("LabeledBy", n, label); ok {
		return "", f.err
	}
	return g.labeler[n], nil
}

func (g *fakeGitHub) MatchingRefs(_ context.Context, prefix string) ([]ghapi.Ref, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.enter("MatchingRefs", 0, prefix); ok {
		return nil, f.err
	}
	var out []ghapi.Ref
	for _, r := range g.locks {
		out = append(out, ghapi.Ref{Ref: r})
	}
	return out, nil
}

// fakeLocker holds locks in memory; an issue in held is held by another run.
type fakeLocker struct {
	mu       sync.Mutex
	held     map[int]string // issue → the other run that holds it
	tookOver string         // the next lease took the lock over from this stale holder
	err      error          // the next Acquire fails with it
	acquired []int
	released int
}

var _ engine.Locker = (*fakeLocker)(nil)

func (l *fakeLocker) Acquire(_ context.Context, n int) (engine.Lease, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		err := l.err
		l.err = nil
		return nil, err
	}
	if h, ok := l.held[n]; ok {
		return nil, &engine.HeldError{Holder: h}
	}
	l.acquired = append(l.acquired, n)
	t := l.tookOver
	l.tookOver = ""
	return &fakeLease{l: l, tookOver: t}, nil
}

type fakeLease struct {
	l        *fakeLocker
	tookOver string
}

func (f *fakeLease) Release(context.Context) error {
	f.l.mu.Lock()
	defer f.l.mu.Unlock()
	f.l.released++
	return nil
}

func (f *fakeLease) TookOver() string      { return f.tookOver }
func (f *fakeLease) Lost() <-chan struct{} { return nil }

// fakeAuth allows the logins in allowed; err, when set, is its answer to everyone.
type fakeAuth struct {
	mu      sync.Mutex
	allowed map[string]bool
	err     error
	asked   []string
}

var _ engine.Authorizer = (*fakeAuth)(nil)

func (a *fakeAuth) Authorize(_ context.Context, login string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, login)
	if a.err != nil {
		return false, a.err
	}
	return a.allowed[login], nil
}

// fakeLog keeps what the engine logged; Untrusted sections go to their own buffers.
type fakeLog struct {
	mu        sync.Mutex
	lines     []string
	untrusted map[string]*bytes.Buffer
}

var _ engine.Logger = (*fakeLog)(nil)

func (l *fakeLog) Infof(format string, args ...any) { l.add("info: " + fmt.Sprintf(format, args...)) }
func (l *fakeLog) Warnf(format string, args ...any) { l.add("warn: " + fmt.Sprintf(format, args...)) }

func (l *fakeLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

func (l *fakeLog) Untrusted(title string) (io.Writer, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.untrusted == nil {
		l.untrusted = map[string]*bytes.Buffer{}
	}
	b := &bytes.Buffer{}
	l.untrusted[title] = b
	l.lines = append(l.lines, "untrusted: "+title)
	return &lockedWriter{mu: &l.mu, w: b}, func() { l.add("end: " + title) }
}

// has says whether a logged line holds s.
func (l *fakeLog) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// fakeLedger is the day's spending in memory.
type fakeLedger struct {
	mu  sync.Mutex
	day ledger.Day
	err error
}

var _ engine.Ledger = (*fakeLedger)(nil)

func (l *fakeLedger) Today(context.Context) (ledger.Day, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.day, l.err
}

func (l *fakeLedger) Add(_ context.Context, cost float64, tokens int, _ string) (ledger.Day, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.day.CostUSD += cost
	return l.day, l.err
}

// behaviour is what the fake agent does for one command: it writes files into inv.Dir or inv.Artifact
// (through a) and returns how its run ended.
type behaviour func(a *agentRun) (agent.Result, error)

// fakeAgent is an agent.Runner that is Go code: per command, a behaviour; the default writes a good
// document (or, for implement, a file per phase).
type fakeAgent struct {
	mu    sync.Mutex
	owner [2]int // the agent's uid and gid when it is a user of its own (ralph checks that it owns its files)
	do    map[string][]behaviour
	runs  []agent.Invocation
}

var _ agent.Runner = (*fakeAgent)(nil)

// on queues behaviours for command: each run takes the next; the last one stays.
func (f *fakeAgent) on(command string, b ...behaviour) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.do == nil {
		f.do = map[string][]behaviour{}
	}
	f.do[command] = append(f.do[command], b...)
}

// set replaces the behaviours queued for command.
func (f *fakeAgent) set(command string, b ...behaviour) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.do == nil {
		f.do = map[string][]behaviour{}
	}
	f.do[command] = b
}

// commands lists the commands the agent was run for, in order.
func (f *fakeAgent) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, inv := range f.runs {
		out = append(out, inv.Command)
	}
	return out
}

// last is the last invocation.
func (f *fakeAgent) last() agent.Invocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[len(f.runs)-1]
}

func (f *fakeAgent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	f.mu.Lock()
	f.runs = append(f.runs, inv)
	var b behaviour
	if q := f.do[inv.Command]; len(q) > 0 {
		b = q[0]
		if len(q) > 1 {
			f.do[inv.Command] = q[1:]
		}
	}
	f.mu.Unlock()
	if b == nil {
		b = defaultBehaviour(inv.Command)
	}
	a := &agentRun{inv: inv, ctx: ctx}
	res, err := b(a)
	if a.err != nil {
		return agent.Result{ExitCode: 1}, a.err
	}
	// The agent's files are its own: as root, ralph refuses files in the agent's copy it does not own.
	if f.owner[0] != 0 {
		for _, dir := range []string{inv.Dir, inv.TempDir} {
			if err := chownTree(dir, f.owner[0], f.owner[1]); err != nil {
				return agent.Result{ExitCode: 1}, err
			}
		}
	}
	return res, err
}

func chownTree(dir string, uid, gid int) error {
	if dir == "" {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// agentRun is one run of the fake agent.
type agentRun struct {
	inv agent.Invocation
	ctx context.Context
	err error
}

// artifact writes the document at RALPH_ARTIFACT.
func (a *agentRun) artifact(content string) { a.write(a.inv.Artifact, content) }

// file writes a file at rel in the agent's copy.
func (a *agentRun) file(rel, content string) { a.write(filepath.Join(a.inv.Dir, rel), content) }

func (a *agentRun) write(path, content string) {
	if a.err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		a.err = err
		return
	}
	a.err = os.WriteFile(path, []byte(content), 0o644)
}

// ok is a run that exited 0.
func ok() (agent.Result, error) { return agent.Result{ExitCode: 0}, nil }

// writes a document at RALPH_ARTIFACT and exits 0.
func writes(doc string) behaviour {
	return func(a *agentRun) (agent.Result, error) { a.artifact(doc); return ok() }
}

// exits fails the run with an exit code and some output.
func exits(code int, tail string) behaviour {
	return func(*agentRun) (agent.Result, error) {
		return agent.Result{ExitCode: code, Tail: tail}, &agent.ExitError{Code: code}
	}
}

// does nothing and exits 0.
func nothing(*agentRun) (agent.Result, error) { return ok() }

// Documents the default agent writes.
const (
	researchDoc = "# Research\n\nThe widget lives in widget.go.\n"
	planDoc     = "# Plan\n\n## Phase 1: Add the parser\n\nWrite parse.go.\n\n## Phase 2: Wire it up\n\nWrite wire.go.\n"
	approved    = "# Review\n\nLooks right.\n\nVERDICT: APPROVED\n"
	sentBack    = "# Review\n\nPhase 2 is vague.\n\nVERDICT: NEEDS_ITERATION\n"
)

func defaultBehaviour(command string) behaviour {
	switch command {
	case "research":
		return writes(researchDoc)
	case "plan":
		return writes(planDoc)
	case "review", "self-review":
		return writes(approved)
	case "triage":
		return writes("The issue is clear enough to research.\n\nDECISION: research\n")
	case "implement":
		return func(a *agentRun) (agent.Result, error) {
			a.file(fmt.Sprintf("phase%d.txt", a.inv.Phase), fmt.Sprintf("phase %d of %d\n", a.inv.Phase, a.inv.Phases))
			return ok()
		}
	}
	return func(*agentRun) (agent.Result, error) {
		return agent.Result{ExitCode: 2}, errors.New("no behaviour for " + command)
	}
}
