package githubtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Checks: check suites and check runs on a commit, and, for those GitHub Actions ran, the workflow run,
// its jobs (a job's id is its check run's id, as on GitHub) with their steps, and each job's log, which
// GitHub serves as a 302 to a signed download URL on another host.

// ActionsApp is the slug of the GitHub App that Actions' check runs belong to.
const ActionsApp = "github-actions"

// CheckRun is a check run a test sets on a commit.
type CheckRun struct {
	Name       string
	Status     string // default "completed"
	Conclusion string // success, failure, neutral, cancelled, skipped, timed_out, action_required
	Title      string // output.title
	Summary    string // output.summary
	Text       string // output.text
	// Annotations are the check's annotations (another CI's: where the failing assertion is).
	Annotations []Annotation
	// App is the GitHub App the check belongs to; default ActionsApp, whose checks are jobs with a log.
	App string
	// Workflow names the workflow run the job belongs to (Actions checks); default "CI".
	Workflow string
	// Steps are the job's steps in order (Actions checks).
	Steps []Step
	// Log is the job's log; LogStream, when set, writes it instead (for a log too large to hold).
	Log       string
	LogStream func(w io.Writer) error
	// Fork names the branch of a fork's pull request whose workflow or app made the check on this commit:
	// its suite's head branch is that name (it may be the same as a branch of this repository), and the
	// suite lists none of this repository's pull requests, as GitHub's suites of a fork's pull request do.
	Fork string
}

// Annotation is one annotation of a check run.
type Annotation struct {
	Path      string
	StartLine int
	Level     string // notice, warning, failure (default)
	Title     string
	Message   string
}

// Step is one step of an Actions job.
type Step struct {
	Name       string
	Conclusion string // success, failure, skipped, cancelled
}

type checkSuite struct {
	id        int64
	sha       string
	branch    string
	app       string
	runID     int64 // the workflow run, for Actions
	workflow  string
	created   time.Time
	updated   time.Time
	checkRuns []*checkRun
	runNumber int64
	fork      bool // a fork's pull request made it: it lists no pull request of this repository
}

type checkRun struct {
	id       int64
	suite    *checkSuite
	spec     CheckRun
	started  time.Time
	finished time.Time
}

// SetCheckRun creates, or updates by name, a check run on commit sha (in the check suite of its app and
// workflow, created as needed) and returns its id, which is also its job's id for an Actions check.
func (s *Server) SetCheckRun(sha string, cr CheckRun) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cr.Status == "" {
		cr.Status = "completed"
	}
	if cr.App == "" {
		cr.App = ActionsApp
	}
	if cr.Workflow == "" && cr.App == ActionsApp {
		cr.Workflow = "CI"
	}
	now := s.now()
	var suite *checkSuite
	for _, cs := range s.suites {
		if cs.sha == sha && cs.app == cr.App && cs.workflow == cr.Workflow && cs.fork == (cr.Fork != "") && (cr.Fork == "" || cs.branch == cr.Fork) {
			suite = cs
		}
	}
	if suite == nil {
		suite = &checkSuite{id: s.newID(), sha: sha, app: cr.App, workflow: cr.Workflow, created: now, fork: cr.Fork != ""}
		for _, is := range s.sortedIssues() {
			if is.pull != nil && s.headSHA(is) == sha {
				suite.branch = is.pull.head
			}
		}
		if suite.fork {
			suite.branch = cr.Fork
		}
		if cr.App == ActionsApp {
			suite.runID = s.newID()
			suite.runNumber = int64(len(s.suites) + 1)
		}
		s.suites = append(s.suites, suite)
	}
	suite.updated = now
	for _, r := range suite.checkRuns {
		if r.spec.Name == cr.Name {
			r.spec = cr
			r.finished = now
			return r.id
		}
	}
	r := &checkRun{id: s.newID(), suite: suite, spec: cr, started: now, finished: now}
	suite.checkRuns = append(suite.checkRuns, r)
	return r.id
}

// CheckSuiteID is the id of the check suite check run id belongs to (0 for none).
func (s *Server) CheckSuiteID(checkRun int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.findCheckRun(checkRun); r != nil {
		return r.suite.id
	}
	return 0
}

// WorkflowRunID is the Actions run an Actions check run's job belongs to (0 for none).
func (s *Server) WorkflowRunID(checkRun int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.findCheckRun(checkRun); r != nil {
		return r.suite.runID
	}
	return 0
}

func (s *Server) findCheckRun(id int64) *checkRun {
	for _, cs := range s.suites {
		for _, r := range cs.checkRuns {
			if r.id == id {
				return r
			}
		}
	}
	return nil
}

func (s *Server) checkRoutes() map[string]handler {
	h := func(fn func(c *call) (int, any), query []string, body ...string) handler {
		return handler{fn: fn, query: query, body: body}
	}
	const repo = "/repos/{owner}/{repo}"
	routes := map[string]handler{
		"GET " + repo + "/commits/{ref}/check-runs":      h(s.listCheckRuns, append([]string{"check_name", "status", "filter", "app_id"}, pageParams...)),
		"GET " + repo + "/commits/{ref}/check-suites":    h(s.listCheckSuites, append([]string{"check_name", "app_id"}, pageParams...)),
		"GET " + repo + "/actions/runs/{run_id}/jobs":    h(s.listJobs, append([]string{"filter"}, pageParams...)),
		"GET " + repo + "/actions/jobs/{job_id}/logs":    h(s.jobLogs, nil),
		"GET " + repo + "/actions/jobs/{job_id}":         h(s.getJob, nil),
		"GET " + repo + "/check-runs/{check_run_id}":     h(s.getCheckRun, nil),
		"GET " + repo + "/check-suites/{check_suite_id}": h(s.getCheckSuite, nil),
	}
	routes["GET "+repo+"/check-runs/{check_run_id}/annotations"] = h(s.listAnnotations, pageParams)
	return routes
}

func (s *Server) appJSON(slug string) map[string]any {
	name := map[string]string{ActionsApp: "GitHub Actions"}[slug]
	if name == "" {
		name = slug
	}
	return map[string]any{
		"id": 15368, "slug": slug, "node_id": "MDM6QXBwMTUzNjg=", "owner": s.userJSON("github"), "name": name,
		"description": "", "external_url": "https://help.github.com/en/actions", "html_url": s.ServerURL + "/apps/" + slug,
		"created_at": "2018-07-30T09:30:17Z", "updated_at": "2019-12-10T19:04:12Z",
		"permissions": map[string]any{"actions": "write", "checks": "write", "contents": "write"}, "events": []any{},
	}
}

// suiteState is a suite's status and conclusion from its runs, as GitHub derives it.
func suiteState(cs *checkSuite) (string, string) {
	status, conclusion := "completed", "success"
	for _, r := range cs.checkRuns {
		if r.spec.Status != "completed" {
			return r.spec.Status, ""
		}
		switch r.spec.Conclusion {
		case "failure", "timed_out", "cancelled", "action_required":
			conclusion = "failure"
		}
	}
	return status, conclusion
}

func (s *Server) pullsOf(cs *checkSuite) []any {
	out := []any{}
	if cs.fork {
		return out
	}
	for _, is := range s.sortedIssues() {
		if is.pull == nil || is.state != "open" || s.headSHA(is) != cs.sha {
			continue
		}
		ref := func(branch, sha string) map[string]any {
			return map[string]any{"ref": branch, "sha": sha, "repo": map[string]any{"id": 1296269, "url": s.repoAPI(), "name": s.opts.Repo}}
		}
		out = append(out, map[string]any{"id": is.id, "number": is.number, "url": fmt.Sprintf("%s/pulls/%d", s.repoAPI(), is.number),
			"head": ref(is.pull.head, cs.sha), "base": ref(is.pull.base, s.branchSHA(is.pull.base))})
	}
	return out
}

func (s *Server) checkSuiteJSON(cs *checkSuite) map[string]any {
	status, conclusion := suiteState(cs)
	api := fmt.Sprintf("%s/check-suites/%d", s.repoAPI(), cs.id)
	return map[string]any{
		"id": cs.id, "node_id": fmt.Sprintf("CS_%d", cs.id), "head_branch": nullable(cs.branch), "head_sha": cs.sha,
		"status": status, "conclusion": nullable(conclusion), "url": api, "before": nil, "after": cs.sha,
		"pull_requests": s.pullsOf(cs), "app": s.appJSON(cs.app), "repository": s.repoJSON(),
		"created_at": timeJSON(cs.created), "updated_at": timeJSON(cs.updated), "head_commit": s.simpleCommit(cs.sha),
		"latest_check_runs_count": len(cs.checkRuns), "check_runs_url": api + "/check-runs",
		"rerequestable": true, "runs_rerequestable": true,
	}
}

// simpleCommit is a commit as a check suite's head_commit shows it.
func (s *Server) simpleCommit(sha string) any {
	gc, err := s.readCommit(sha)
	if err != nil {
		return nil
	}
	who := func(p gitPerson) map[string]any { return map[string]any{"name": p.name, "email": p.email} }
	return map[string]any{"id": gc.sha, "tree_id": gc.tree, "message": gc.message, "timestamp": timeJSON(gc.committer.date),
		"author": who(gc.author), "committer": who(gc.committer)}
}

func (s *Server) jobHTML(r *checkRun) string {
	return fmt.Sprintf("%s/actions/runs/%d/job/%d", s.repoHTML(), r.suite.runID, r.id)
}

func (s *Server) checkRunJSON(r *checkRun) map[string]any {
	html := fmt.Sprintf("%s/runs/%d", s.repoHTML(), r.id)
	details := html
	if r.suite.app == ActionsApp {
		html, details = s.jobHTML(r), s.jobHTML(r)
	}
	var completed any
	if r.spec.Status == "completed" {
		completed = timeJSON(r.finished)
	}
	return map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("CR_%d", r.id), "head_sha": r.suite.sha, "name": r.spec.Name,
		"url": fmt.Sprintf("%s/check-runs/%d", s.repoAPI(), r.id), "html_url": html, "details_url": details,
		"status": r.spec.Status, "conclusion": nullable(r.spec.Conclusion), "started_at": timeJSON(r.started),
		"completed_at": completed, "external_id": "",
		"check_suite": map[string]any{"id": r.suite.id},
		"output": map[string]any{"title": nullable(r.spec.Title), "summary": nullable(r.spec.Summary), "text": nullable(r.spec.Text),
			"annotations_count": len(r.spec.Annotations), "annotations_url": fmt.Sprintf("%s/check-runs/%d/annotations", s.repoAPI(), r.id)},
		"app": s.appJSON(r.suite.app), "pull_requests": s.pullsOf(r.suite),
	}
}

func (s *Server) suitesFor(ref string) []*checkSuite {
	sha := s.resolveCommit(ref)
	var out []*checkSuite
	for _, cs := range s.suites {
		if sha != "" && cs.sha == sha {
			out = append(out, cs)
		}
	}
	return out
}

func (s *Server) listCheckRuns(c *call) (int, any) {
	if s.resolveCommit(c.params["ref"]) == "" {
		return unprocessable("No commit found for SHA: " + c.params["ref"])
	}
	name, status := c.query.Get("check_name"), c.query.Get("status")
	var list []*checkRun
	for _, cs := range s.suitesFor(c.params["ref"]) {
		for _, r := range cs.checkRuns {
			if (name == "" || r.spec.Name == name) && (status == "" || r.spec.Status == status) {
				list = append(list, r)
			}
		}
	}
	lo, hi := c.page(len(list))
	runs := []any{}
	for _, r := range list[lo:hi] {
		runs = append(runs, s.checkRunJSON(r))
	}
	return http.StatusOK, map[string]any{"total_count": len(list), "check_runs": runs}
}

func (s *Server) listCheckSuites(c *call) (int, any) {
	if s.resolveCommit(c.params["ref"]) == "" {
		return unprocessable("No commit found for SHA: " + c.params["ref"])
	}
	list := s.suitesFor(c.params["ref"])
	lo, hi := c.page(len(list))
	out := []any{}
	for _, cs := range list[lo:hi] {
		out = append(out, s.checkSuiteJSON(cs))
	}
	return http.StatusOK, map[string]any{"total_count": len(list), "check_suites": out}
}

func (s *Server) getCheckRun(c *call) (int, any) {
	id, _ := strconv.ParseInt(c.params["check_run_id"], 10, 64)
	r := s.findCheckRun(id)
	if r == nil {
		return notFound()
	}
	return http.StatusOK, s.checkRunJSON(r)
}

func (s *Server) listAnnotations(c *call) (int, any) {
	id, _ := strconv.ParseInt(c.params["check_run_id"], 10, 64)
	r := s.findCheckRun(id)
	if r == nil {
		return notFound()
	}
	list := r.spec.Annotations
	lo, hi := c.page(len(list))
	out := []any{}
	for _, a := range list[lo:hi] {
		level := a.Level
		if level == "" {
			level = "failure"
		}
		out = append(out, map[string]any{"path": a.Path, "start_line": a.StartLine, "end_line": a.StartLine, "start_column": nil, "end_column": nil,
			"annotation_level": level, "title": nullable(a.Title), "message": a.Message, "raw_details": nil,
			"blob_href": fmt.Sprintf("%s/blob/%s/%s", s.repoHTML(), r.suite.sha, a.Path)})
	}
	return http.StatusOK, out
}

func (s *Server) getCheckSuite(c *call) (int, any) {
	id, _ := strconv.ParseInt(c.params["check_suite_id"], 10, 64)
	for _, cs := range s.suites {
		if cs.id == id {
			return http.StatusOK, s.checkSuiteJSON(cs)
		}
	}
	return notFound()
}

// findJob is the Actions job whose id is id (the id of its check run).
func (s *Server) findJob(id string) *checkRun {
	n, _ := strconv.ParseInt(id, 10, 64)
	r := s.findCheckRun(n)
	if r == nil || r.suite.app != ActionsApp {
		return nil
	}
	return r
}

func (s *Server) jobJSON(r *checkRun) map[string]any {
	steps := []any{}
	for i, st := range r.spec.Steps {
		steps = append(steps, map[string]any{"name": st.Name, "status": "completed", "conclusion": nullable(st.Conclusion),
			"number": i + 1, "started_at": timeJSON(r.started), "completed_at": timeJSON(r.finished)})
	}
	var completed any
	if r.spec.Status == "completed" {
		completed = timeJSON(r.finished)
	}
	runAPI := fmt.Sprintf("%s/actions/runs/%d", s.repoAPI(), r.suite.runID)
	return map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("CR_%d", r.id), "run_id": r.suite.runID, "run_url": runAPI, "run_attempt": 1,
		"head_sha": r.suite.sha, "head_branch": nullable(r.suite.branch), "workflow_name": r.suite.workflow, "name": r.spec.Name,
		"url": fmt.Sprintf("%s/actions/jobs/%d", s.repoAPI(), r.id), "html_url": s.jobHTML(r),
		"status": r.spec.Status, "conclusion": nullable(r.spec.Conclusion), "created_at": timeJSON(r.started),
		"started_at": timeJSON(r.started), "completed_at": completed,
		"check_run_url": fmt.Sprintf("%s/check-runs/%d", s.repoAPI(), r.id), "labels": []any{"ubuntu-latest"},
		"runner_id": 1, "runner_name": "GitHub Actions 1", "runner_group_id": 2, "runner_group_name": "GitHub Actions",
		"steps": steps,
	}
}

func (s *Server) listJobs(c *call) (int, any) {
	id, _ := strconv.ParseInt(c.params["run_id"], 10, 64)
	var list []*checkRun
	for _, cs := range s.suites {
		if cs.runID == id && cs.app == ActionsApp {
			list = cs.checkRuns
		}
	}
	if list == nil {
		return notFound()
	}
	lo, hi := c.page(len(list))
	jobs := []any{}
	for _, r := range list[lo:hi] {
		jobs = append(jobs, s.jobJSON(r))
	}
	return http.StatusOK, map[string]any{"total_count": len(list), "jobs": jobs}
}

func (s *Server) getJob(c *call) (int, any) {
	r := s.findJob(c.params["job_id"])
	if r == nil {
		return notFound()
	}
	return http.StatusOK, s.jobJSON(r)
}

// logsPath is where the server serves job logs: outside the API, as GitHub's download host is.
const logsPath = "/_download/job-logs/"

func (s *Server) logSignature(id int64) string {
	m := hmac.New(sha256.New, []byte(s.opts.Token))
	fmt.Fprintf(m, "job-log:%d", id)
	return hex.EncodeToString(m.Sum(nil))
}

// jobLogs answers GET …/actions/jobs/{job_id}/logs as GitHub does: 302 to a signed URL that needs no token.
func (s *Server) jobLogs(c *call) (int, any) {
	r := s.findJob(c.params["job_id"])
	if r == nil {
		return notFound()
	}
	c.w.Header().Set("Location", fmt.Sprintf("%s%s%d?sig=%s", s.ServerURL, logsPath, r.id, s.logSignature(r.id)))
	return http.StatusFound, nil
}

// serveLog answers the download URL jobLogs gave. Like the storage GitHub redirects to, it refuses a request
// that carries an Authorization header: the API token is not the download host's to see.
func (s *Server) serveLog(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path})
	id, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, logsPath), 10, 64)
	job := s.findCheckRun(id)
	var spec CheckRun
	if job != nil {
		spec = job.spec
	}
	s.mu.Unlock()
	switch {
	case r.Method != http.MethodGet:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	case r.Header.Get("Authorization") != "":
		http.Error(w, "the download URL is signed: a request carrying an Authorization header is refused", http.StatusBadRequest)
		return
	case job == nil || !hmac.Equal([]byte(r.URL.Query().Get("sig")), []byte(s.logSignature(id))):
		http.Error(w, "signature not valid", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if spec.LogStream != nil {
		_ = spec.LogStream(w)
		return
	}
	_, _ = io.WriteString(w, spec.Log)
}
