// Package githubtest is an in-process GitHub for tests: the REST endpoints ralph uses,
// backed by a real bare git repository, that rejects every request GitHub's own
// OpenAPI description rejects, so a wrong path or field name in a client fails loudly.
//
// It is stricter than GitHub where GitHub would silently ignore a mistake: an unknown
// query parameter or JSON body property is a 422, and a parameter, property or
// operation GitHub has but this server does not implement is a 501, never ignored.
// GraphQL documents are validated against GitHub's schema (graphql.go) and the Projects (V2) operations
// ralph uses are executed against an in-memory model (projects.go).
package githubtest

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Options configure a Server. The zero value is a github.com-style server for octo/demo.
type Options struct {
	Owner, Repo   string // default "octo", "demo"
	DefaultBranch string // default "main"
	// Private makes the repository private.
	Private bool
	// NoWebCommitSigning is GitHub Enterprise Server whose admin has not turned on web commit signing:
	// commits made through the API are not signed.
	NoWebCommitSigning bool
	// APIPrefix is "" (github.com style: the API at the server root, GraphQL at /graphql)
	// or "/api/v3" (Enterprise style: GraphQL at /api/graphql).
	APIPrefix string
	// Token is the only credential accepted, as "token <T>" or "Bearer <T>"; default "test-token".
	Token string
	// TokenLogin is the account the token belongs to: what the server writes as when the token creates a
	// comment, an issue or a label event; default BotLogin (the Actions token). A GitHub App's token writes
	// as "<app>[bot]", a personal access token as its user.
	TokenLogin string
	// TLS serves HTTPS; CACertPEM gives the certificate to trust (for SSL_CERT_FILE).
	TLS bool
	// GitHTTP serves the repository over git's smart HTTP protocol at GitURL (see smarthttp.go).
	GitHTTP bool
	// Now is the server's clock; default time.Now. Timestamps are kept to the second, like GitHub's.
	Now func() time.Time
	// DispatchInputs are the inputs the workflow's workflow_dispatch declares; a dispatch with another is
	// refused as GitHub refuses it. nil: any input is taken.
	DispatchInputs []string
	// RunName is the display title GitHub gives a dispatched run, as the workflow's run-name evaluates for
	// its inputs; nil: the workflow's name, "ralph".
	RunName func(inputs map[string]any) string
}

// BotLogin is the user the token belongs to, as for the GITHUB_TOKEN of an Actions run.
const BotLogin = "github-actions[bot]"

// Server is a running test GitHub. Its methods are safe for concurrent use.
type Server struct {
	URL        string // REST API base, no trailing slash: ServerURL + APIPrefix
	GraphQLURL string // GraphQL endpoint
	ServerURL  string // the web URL, as in html_url links
	BareRepo   string // path of the bare repository that backs git data

	opts     Options
	t        TB
	srv      *httptest.Server
	spec     *spec
	handlers map[string]handler

	mu         sync.Mutex
	nextNumber int
	nextID     int64
	issues     map[int]*issue
	comments   []*comment
	labels     []*label
	events     []*event
	userIDs    map[string]int64
	perms      map[string]string
	// hideCollaborators answers GraphQL's Repository.collaborators as GitHub does to a token without push
	// access: null and a FORBIDDEN error (see HideCollaborators).
	hideCollaborators bool
	dispatches        []Dispatch
	runs              map[int64]*run
	limits            Limits     // GitHub's rate limits, see limits.go
	limitState        limitState // what they counted
	requests          []Request
	intercept         func(w http.ResponseWriter, r *http.Request) bool
	faults            faults          // what to do to answers after the handler, see faults.go
	graphql           *graphQLState   // see graphql.go and projects.go
	graph             issueGraph      // sub-issues and dependencies, see issuegraph.go
	actions           actionsState    // Actions settings, secrets and workflows, see actions.go
	reviews           []*review       // pull request reviews, see reviews.go
	threads           []*reviewThread // review threads and their comments, see reviews.go
	suites            []*checkSuite   // check suites, runs, Actions jobs and logs, see checks.go
	rulesets          []Ruleset       // the repository's rulesets, see rules.go
	signedCommits     map[string]bool // the commits the server signed (API-made, no author or committer)
	// checkResponse, when set (by this package's tests), sees every API response.
	checkResponse func(path string, r *http.Request, status int, header http.Header, body []byte)
}

// Comment is an issue comment as the server holds it.
type Comment struct {
	ID                   int64
	User, Body           string
	CreatedAt, UpdatedAt time.Time
}

// Issue is a snapshot of an issue (or of a pull request seen as an issue).
type Issue struct {
	Number                                  int
	Title, Body, Author, State, StateReason string
	Labels                                  []string
	IsPull                                  bool
}

// Pull is a snapshot of a pull request.
type Pull struct {
	Number                         int
	Title, Body, Head, Base, State string
	Draft, Merged                  bool
	HeadSHA                        string
	Author                         string // who opened it: the token's account
}

// StartsWorkflows says whether GitHub starts pull_request workflows (a repository's CI) for the pull
// request: not when the Actions token opened it, as for every event that token causes.
func (p Pull) StartsWorkflows() bool { return p.Author != BotLogin }

// Dispatch is a workflow_dispatch request the server received.
type Dispatch struct {
	Workflow, Ref string
	Inputs        map[string]any
}

// Request is one API request the server answered.
type Request struct {
	Method, Path string // Path is escaped, without the API prefix or query
	Status       int
	// Operation is a GraphQL request's operation and top-level fields ("query repository", "mutation
	// addProjectV2ItemById"); "" for REST.
	Operation string
}

// Write says whether the request could change something: a REST request other than GET, or a GraphQL
// mutation (a GraphQL query is a POST that only reads).
func (r Request) Write() bool {
	if r.Operation != "" {
		return !strings.HasPrefix(r.Operation, "query")
	}
	return r.Method != http.MethodGet
}

type issue struct {
	number                   int
	id                       int64
	title, body, author      string
	state, stateReason       string
	labels                   []string // names, as in the repository's labels
	pull                     *pull
	created, updated, closed time.Time
}

type pull struct {
	head, base          string
	draft, merged       bool
	headSHA             string
	mergedAt            time.Time
	maintainerCanModify bool
	requested           []string // logins whose review is requested
}

type comment struct {
	id               int64
	issue            int
	user, body       string
	created, updated time.Time
}

type label struct {
	id                       int64
	name, color, description string
}

type event struct {
	id      int64
	issue   int
	kind    string // "labeled" or "unlabeled"
	actor   string
	label   string
	color   string
	created time.Time
}

type run struct {
	id                 int64
	status, conclusion string
	created, updated   time.Time
	title              string // display_title: the workflow's run-name (Options.RunName), or its name
}

// TB is what a Server needs of the test that runs it: temporary directories, cleanups when it ends, and
// somewhere to report what it found wrong. A *testing.T is one; so is the demo's, which runs without the
// testing package.
type TB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// New starts a Server, closed when the test ends, with a bare repository holding one
// commit (README.md) on the default branch.
func New(t TB, opts Options) *Server {
	t.Helper()
	if opts.Owner == "" {
		opts.Owner = "octo"
	}
	if opts.Repo == "" {
		opts.Repo = "demo"
	}
	if opts.DefaultBranch == "" {
		opts.DefaultBranch = "main"
	}
	if opts.Token == "" {
		opts.Token = "test-token"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TokenLogin == "" {
		opts.TokenLogin = BotLogin
	}
	opts.APIPrefix = strings.TrimSuffix(opts.APIPrefix, "/")
	sp, err := loadSpec()
	if err != nil {
		t.Fatalf("githubtest: %v", err)
	}
	s := &Server{
		opts:       opts,
		t:          t,
		spec:       sp,
		nextNumber: 1,
		nextID:     1000,
		issues:     map[int]*issue{},
		userIDs:    map[string]int64{BotLogin: 41898282},
		perms:      map[string]string{},
		runs:       map[int64]*run{},
		actions:    newActionsState(),
	}
	s.knowUser(opts.TokenLogin)
	s.handlers = s.routes()
	for _, routes := range []map[string]handler{s.graphRoutes(), s.reviewRoutes(), s.checkRoutes()} {
		for route, h := range routes {
			s.handlers[route] = h
		}
	}
	s.BareRepo = filepath.Join(t.TempDir(), opts.Repo+".git")
	if err := s.initRepo(t.TempDir()); err != nil {
		t.Fatalf("githubtest: create repository: %v", err)
	}
	s.srv = httptest.NewUnstartedServer(s)
	// A client that does not trust the certificate is a test's business, not log noise.
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if opts.TLS {
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	t.Cleanup(s.srv.Close)
	s.ServerURL = s.srv.URL
	s.URL = s.srv.URL + opts.APIPrefix
	s.GraphQLURL = s.srv.URL + s.graphQLPath()
	return s
}

func (s *Server) graphQLPath() string {
	if s.opts.APIPrefix != "" {
		return "/api/graphql"
	}
	return "/graphql"
}

// CACertPEM is the PEM certificate of a TLS server (nil without TLS).
func (s *Server) CACertPEM() []byte {
	if s.srv.Certificate() == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// Client is an HTTP client that trusts the server's certificate.
func (s *Server) Client() *http.Client { return s.srv.Client() }

func (s *Server) initRepo(work string) error {
	if out, err := gitCommand("", nil, "init", "--quiet", "--bare", "-b", s.opts.DefaultBranch, s.BareRepo).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v: %s", err, out)
	}
	clone := filepath.Join(work, "clone")
	steps := [][]string{
		{"clone", "--quiet", s.BareRepo, clone},
		{"-C", clone, "checkout", "--quiet", "-B", s.opts.DefaultBranch},
	}
	for _, args := range steps {
		if out, err := gitCommand("", nil, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	readme := fmt.Sprintf("# %s\n", s.opts.Repo)
	if err := os.WriteFile(filepath.Join(clone, "README.md"), []byte(readme), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"-C", clone, "add", "README.md"},
		{"-C", clone, "commit", "--quiet", "-m", "Initial commit"},
		{"-C", clone, "push", "--quiet", "origin", "HEAD:refs/heads/" + s.opts.DefaultBranch},
	} {
		if out, err := gitCommand("", nil, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	// The empty tree, so that a commit with no files (a lock) can point at a stored tree.
	_, err := s.git(strings.NewReader(""), "hash-object", "-w", "-t", "tree", "--stdin")
	return err
}

// statusWriter remembers the status and, for response checks, the body.
type statusWriter struct {
	http.ResponseWriter
	status int
	body   []byte
	keep   bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.keep {
		w.body = append(w.body, b...)
	}
	return w.ResponseWriter.Write(b)
}

// ServeHTTP answers a request: the intercept hook, authentication, the OpenAPI
// check, then the operation's handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	intercept, check := s.intercept, s.checkResponse
	s.mu.Unlock()
	escaped := r.URL.EscapedPath()
	if strings.HasPrefix(escaped, logsPath) {
		s.serveLog(w, r) // the download host of job logs, see checks.go
		return
	}
	if s.isGitHTTP(r) {
		s.serveGitHTTP(w, r) // git's smart HTTP, see smarthttp.go
		return
	}
	sw := &statusWriter{ResponseWriter: s.holdResponse(w), keep: check != nil}
	path, isAPI := strings.CutPrefix(escaped, s.opts.APIPrefix)
	isGraphQL := escaped == s.graphQLPath()
	if !isGraphQL && (!isAPI || (path != "" && !strings.HasPrefix(path, "/"))) {
		http.NotFound(w, r)
		return
	}
	if path == "" {
		path = "/"
	}
	if isGraphQL {
		path = escaped
	}
	// Registered before the recording below, so it runs after it: a lost answer is still a request answered.
	defer func() { s.settleResponse(sw.ResponseWriter, r.Method, path) }()
	route, operation := "", ""
	defer func() {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: path, Status: sw.status, Operation: operation})
		s.mu.Unlock()
		if check != nil && route != "" {
			check(path, r, sw.status, sw.Header(), sw.body)
		}
	}()

	h := sw.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	h.Set("X-GitHub-Request-Id", fmt.Sprintf("GHT:%d", time.Now().UnixNano()))
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", "4999")
	h.Set("X-RateLimit-Used", "1")
	h.Set("X-RateLimit-Reset", fmt.Sprint(s.now().Add(time.Hour).Unix()))
	h.Set("X-RateLimit-Resource", "core")

	if intercept != nil && intercept(sw, r) {
		return
	}
	if !isGraphQL {
		done, ok := s.limit(sw, r, path)
		if !ok {
			return
		}
		defer done()
	}
	if !s.authorized(r) {
		writeJSON(sw, http.StatusUnauthorized, errorBody("Bad credentials"))
		return
	}
	if isGraphQL {
		operation = s.serveGraphQL(sw, r) // graphql.go
		return
	}

	rt, params, body, err := s.spec.check(r, path)
	if err != nil {
		rej := err.(*rejection)
		writeJSON(sw, rej.status, errorBody(rej.message))
		return
	}
	route = rt.Method + " " + rt.Path
	if o, ok := params["owner"]; ok && (!strings.EqualFold(o, s.opts.Owner) || !strings.EqualFold(params["repo"], s.opts.Repo)) {
		writeJSON(sw, http.StatusNotFound, errorBody("Not Found"))
		return
	}
	hd, ok := s.handlers[route]
	if !ok {
		writeJSON(sw, http.StatusNotImplemented, errorBody(fmt.Sprintf(
			"githubtest does not implement %s (GitHub has it): add a handler in internal/githubtest", route)))
		return
	}
	c := &call{s: s, w: sw, r: r, params: params, query: r.URL.Query(), route: route}
	if m, ok := body.(map[string]any); ok {
		c.body = m
	}
	c.raw = body
	if msg := hd.unsupported(c); msg != "" {
		writeJSON(sw, http.StatusNotImplemented, errorBody(msg))
		return
	}
	status, v := hd.run(c)
	writeJSON(sw, status, v)
}

func (s *Server) authorized(r *http.Request) bool {
	a := r.Header.Get("Authorization")
	return a == "token "+s.opts.Token || a == "Bearer "+s.opts.Token || s.authorizedExtra(r)
}

func errorBody(msg string) map[string]any {
	return map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": ""}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	if m, ok := v.(map[string]any); ok && m["status"] == "" {
		m["status"] = fmt.Sprint(status)
	}
	if v == nil {
		w.Header().Del("Content-Type")
		w.WriteHeader(status)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// now is the clock to the second, as GitHub's timestamps are.
// TokenLogin is the account the server's token belongs to (Options.TokenLogin).
func (s *Server) TokenLogin() string { return s.opts.TokenLogin }

// SetTokenLogin makes the token login's, as a person's own token is: call it before the first request.
func (s *Server) SetTokenLogin(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.TokenLogin = login
	s.knowUser(login)
}

func (s *Server) now() time.Time { return s.opts.Now().UTC().Truncate(time.Second) }

func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}

// Requests lists every API request answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Intercept installs f to run before each API request is handled (nil removes it);
// when f returns true it has answered the request itself. For fault injection.
func (s *Server) Intercept(f func(w http.ResponseWriter, r *http.Request) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intercept = f
}

// CreateIssue opens an issue by author, with labels (created in the repository when
// new, each recorded as a "labeled" event by author), and returns its number.
func (s *Server) CreateIssue(author, title, body string, labels ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.newIssue(author, title, body)
	for _, l := range labels {
		s.addLabel(is, l, author)
	}
	return is.number
}

func (s *Server) newIssue(author, title, body string) *issue {
	now := s.now()
	is := &issue{number: s.nextNumber, id: s.newID(), title: title, body: body, author: author,
		state: "open", created: now, updated: now}
	s.nextNumber++
	s.issues[is.number] = is
	s.knowUser(author)
	return is
}

func (s *Server) knowUser(login string) int64 {
	id, ok := s.userIDs[login]
	if !ok {
		id = int64(5000 + len(s.userIDs))
		s.userIDs[login] = id
	}
	return id
}

// lookupIssue reports a test error for a number that is not an issue.
func (s *Server) lookupIssue(n int) *issue {
	is := s.issues[n]
	if is == nil {
		s.t.Errorf("githubtest: no issue #%d", n)
	}
	return is
}

// AddLabel adds a label to issue n as actor would on the web (creating it in the
// repository when new), recording a "labeled" event.
func (s *Server) AddLabel(n int, label, actor string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.lookupIssue(n); is != nil {
		s.addLabel(is, label, actor)
	}
}

// RemoveLabel removes a label from issue n as actor would, recording an "unlabeled" event.
func (s *Server) RemoveLabel(n int, label, actor string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.lookupIssue(n); is != nil {
		s.removeLabel(is, label, actor)
	}
}

// RepoLabels lists the repository's labels by name.
func (s *Server) RepoLabels() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.labels))
	for _, l := range s.labels {
		names = append(names, l.name)
	}
	return names
}

// DeleteRepoLabel deletes the repository's label name, as a person does in the repository's settings.
func (s *Server) DeleteRepoLabel(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.labels = slices.DeleteFunc(s.labels, func(l *label) bool { return strings.EqualFold(l.name, name) })
}

// Labels lists the label names on issue n, sorted.
func (s *Server) Labels(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.lookupIssue(n); is != nil {
		return slices.Clone(is.labels)
	}
	return nil
}

// AddComment comments on issue n as user.
func (s *Server) AddComment(n int, user, body string) Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lookupIssue(n) == nil {
		return Comment{}
	}
	return s.addComment(n, user, body).snapshot()
}

// EditComment changes a comment's body as its author (or someone with write access) would on GitHub.
func (s *Server) EditComment(id int64, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.comments {
		if c.id == id {
			c.body, c.updated = body, s.now()
			return
		}
	}
	s.t.Errorf("no comment %d to edit", id)
}

func (s *Server) addComment(n int, user, body string) *comment {
	now := s.now()
	c := &comment{id: s.newID(), issue: n, user: user, body: body, created: now, updated: now}
	s.comments = append(s.comments, c)
	s.knowUser(user)
	return c
}

func (c *comment) snapshot() Comment {
	return Comment{ID: c.id, User: c.user, Body: c.body, CreatedAt: c.created, UpdatedAt: c.updated}
}

// Comments lists the comments on issue n in creation order.
func (s *Server) Comments(n int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.issue == n {
			out = append(out, c.snapshot())
		}
	}
	return out
}

// Issue is a snapshot of issue n (the zero Issue, and a test error, if there is none).
func (s *Server) Issue(n int) Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.lookupIssue(n)
	if is == nil {
		return Issue{}
	}
	return Issue{Number: is.number, Title: is.title, Body: is.body, Author: is.author, State: is.state,
		StateReason: is.stateReason, Labels: slices.Clone(is.labels), IsPull: is.pull != nil}
}

// HideCollaborators makes GraphQL's Repository.collaborators answer as it does to a token that may not see
// them (null, FORBIDDEN), as a client must expect.
func (s *Server) HideCollaborators() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hideCollaborators = true
}

// SetPermission gives user a role on the repository: "admin", "maintain", "write",
// "triage", "read" or "none". A user the server has seen (an author, commenter, label
// actor) without a role has "none"; for a login it has never seen the API answers 404,
// as GitHub does for an account that does not exist.
func (s *Server) SetPermission(user, perm string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch perm {
	case "admin", "maintain", "write", "triage", "read", "none":
	default:
		s.t.Errorf("githubtest: unknown permission %q", perm)
		return
	}
	s.knowUser(user)
	s.perms[user] = perm
}

// Pulls lists the pull requests by number.
func (s *Server) Pulls() []Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Pull
	for _, is := range s.sortedIssues() {
		if is.pull != nil {
			out = append(out, Pull{Number: is.number, Title: is.title, Body: is.body, Head: is.pull.head,
				Base: is.pull.base, State: is.state, Draft: is.pull.draft, Merged: is.pull.merged, HeadSHA: s.headSHA(is), Author: is.author})
		}
	}
	return out
}

func (s *Server) sortedIssues() []*issue {
	out := make([]*issue, 0, len(s.issues))
	for _, is := range s.issues {
		out = append(out, is)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].number < out[j].number })
	return out
}

// MergePull merges pull request n (merged, closed) and, when its base is the default
// branch, closes the issues its body names with "Closes #N", "Fixes #N" or
// "Resolves #N", as GitHub does. The bare repository is not changed.
func (s *Server) MergePull(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.lookupIssue(n)
	if is == nil || is.pull == nil {
		s.t.Errorf("githubtest: #%d is not a pull request", n)
		return
	}
	is.pull.headSHA = s.headSHA(is)
	is.pull.merged = true
	is.pull.mergedAt = s.now()
	s.setState(is, "closed", "")
	if is.pull.base != s.opts.DefaultBranch {
		return
	}
	for _, m := range closingRE.FindAllStringSubmatch(is.body, -1) {
		var k int
		fmt.Sscan(m[1], &k)
		if target := s.issues[k]; target != nil && target.pull == nil && target.state == "open" {
			s.setState(target, "closed", "completed")
		}
	}
}

// ClosePull closes pull request n without merging it.
func (s *Server) ClosePull(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.lookupIssue(n)
	if is == nil || is.pull == nil {
		s.t.Errorf("githubtest: #%d is not a pull request", n)
		return
	}
	is.pull.headSHA = s.headSHA(is)
	s.setState(is, "closed", "")
}

// Dispatches lists the workflow_dispatch requests received, in order.
func (s *Server) Dispatches() []Dispatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.dispatches)
}

// SetWorkflowRun creates or updates Actions run id ("queued", "in_progress",
// "completed"; conclusion "" until completed).
func (s *Server) SetWorkflowRun(id int64, status, conclusion string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	r := s.runs[id]
	if r == nil {
		r = &run{id: id, created: now}
		s.runs[id] = r
	}
	r.status, r.conclusion, r.updated = status, conclusion, now
}

// gitCommand runs git isolated from the user's and system's configuration.
func gitCommand(gitDir string, stdin *strings.Reader, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Octo Cat", "GIT_AUTHOR_EMAIL=octocat@example.com",
		"GIT_COMMITTER_NAME=GitHub", "GIT_COMMITTER_EMAIL=noreply@github.com")
	if gitDir != "" {
		cmd.Env = append(cmd.Env, "GIT_DIR="+gitDir)
	}
	if stdin != nil {
		cmd.Stdin = stdin
	}
	return cmd
}

// urlPath joins escaped path segments.
func urlPath(segs ...string) string {
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
