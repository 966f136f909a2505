package githubtest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// handler serves one operation of GitHub's description. query and body name the
// parameters and properties it implements: one that GitHub has but the handler
// does not is answered 501, so a test never passes on a silently ignored input.
type handler struct {
	fn     func(c *call) (int, any)
	query  []string
	body   []string
	noLock bool // git-only handlers run without the server's mutex
}

func (h handler) unsupported(c *call) string {
	var names []string
	for name := range c.query {
		if !slices.Contains(h.query, name) {
			names = append(names, "query parameter "+strconv.Quote(name))
		}
	}
	for name := range c.body {
		if !slices.Contains(h.body, name) {
			names = append(names, "body property "+strconv.Quote(name))
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return fmt.Sprintf("githubtest does not implement %s of %s (GitHub does)", strings.Join(names, ", "), c.route)
}

// call is one request being handled.
type call struct {
	s      *Server
	w      http.ResponseWriter
	r      *http.Request
	route  string
	params map[string]string
	query  url.Values
	body   map[string]any // the JSON body when it is an object
	raw    any            // the JSON body as decoded
}

var pageParams = []string{"per_page", "page"}

func (s *Server) routes() map[string]handler {
	h := func(fn func(c *call) (int, any), query []string, body ...string) handler {
		return handler{fn: fn, query: query, body: body}
	}
	git := func(fn func(c *call) (int, any), body ...string) handler {
		return handler{fn: fn, body: body, noLock: true}
	}
	const repo = "/repos/{owner}/{repo}"
	return map[string]handler{
		"GET " + repo: h(s.getRepo, nil),

		"GET " + repo + "/issues":                  h(s.listIssues, append([]string{"state", "labels", "sort", "direction"}, pageParams...)),
		"POST " + repo + "/issues":                 h(s.createIssue, nil, "title", "body", "labels"),
		"GET " + repo + "/issues/{issue_number}":   h(s.getIssue, nil),
		"PATCH " + repo + "/issues/{issue_number}": h(s.updateIssue, nil, "title", "body", "state", "state_reason", "labels"),

		"GET " + repo + "/labels":                                 h(s.listLabels, pageParams),
		"POST " + repo + "/labels":                                h(s.createLabel, nil, "name", "color", "description"),
		"GET " + repo + "/labels/{name}":                          h(s.getLabel, nil),
		"GET " + repo + "/issues/{issue_number}/labels":           h(s.listIssueLabels, pageParams),
		"POST " + repo + "/issues/{issue_number}/labels":          h(s.addIssueLabels, nil, "labels"),
		"PUT " + repo + "/issues/{issue_number}/labels":           h(s.setIssueLabels, nil, "labels"),
		"DELETE " + repo + "/issues/{issue_number}/labels":        h(s.clearIssueLabels, nil),
		"DELETE " + repo + "/issues/{issue_number}/labels/{name}": h(s.removeIssueLabel, nil),
		"GET " + repo + "/issues/{issue_number}/events":           h(s.listIssueEvents, pageParams),

		"GET " + repo + "/issues/{issue_number}/comments":  h(s.listComments, pageParams),
		"POST " + repo + "/issues/{issue_number}/comments": h(s.createComment, nil, "body"),
		"GET " + repo + "/issues/comments/{comment_id}":    h(s.getComment, nil),
		"PATCH " + repo + "/issues/comments/{comment_id}":  h(s.updateComment, nil, "body"),
		"DELETE " + repo + "/issues/comments/{comment_id}": h(s.deleteComment, nil),

		"GET " + repo + "/pulls":                 h(s.listPulls, append([]string{"state", "head", "base", "sort", "direction"}, pageParams...)),
		"POST " + repo + "/pulls":                h(s.createPull, nil, "title", "head", "base", "body", "draft", "maintainer_can_modify"),
		"GET " + repo + "/pulls/{pull_number}":   h(s.getPull, nil),
		"PATCH " + repo + "/pulls/{pull_number}": h(s.updatePull, nil, "title", "body", "state", "base", "maintainer_can_modify"),

		"GET " + repo + "/git/ref/{ref}":            git(s.getRef),
		"GET " + repo + "/git/matching-refs/{ref}":  git(s.matchingRefs),
		"POST " + repo + "/git/refs":                git(s.createRefOp, "ref", "sha"),
		"PATCH " + repo + "/git/refs/{ref}":         git(s.updateRefOp, "sha", "force"),
		"DELETE " + repo + "/git/refs/{ref}":        git(s.deleteRefOp),
		"GET " + repo + "/branches/{branch}":        git(s.getBranch),
		"GET " + repo + "/commits/{ref}":            git(s.getCommit),
		"POST " + repo + "/git/blobs":               git(s.createBlob, "content", "encoding"),
		"GET " + repo + "/git/blobs/{file_sha}":     git(s.getBlob),
		"POST " + repo + "/git/commits":             git(s.createGitCommit, "message", "tree", "parents", "author", "committer"),
		"GET " + repo + "/git/commits/{commit_sha}": git(s.getGitCommit),

		"GET " + repo + "/collaborators/{username}/permission":         h(s.getPermission, nil),
		"POST " + repo + "/actions/workflows/{workflow_id}/dispatches": h(s.dispatch, nil, "ref", "inputs", "return_run_details"),
		"GET " + repo + "/actions/runs/{run_id}":                       h(s.getRun, nil),
		"GET " + repo + "/actions/permissions":                         h(s.getActionsPermissions, nil),
		"PUT " + repo + "/actions/permissions":                         h(s.putActionsPermissions, nil, "enabled", "allowed_actions", "sha_pinning_required"),
		"GET " + repo + "/actions/permissions/workflow":                h(s.getWorkflowPermissions, nil),
		"PUT " + repo + "/actions/permissions/workflow":                h(s.putWorkflowPermissions, nil, "default_workflow_permissions", "can_approve_pull_request_reviews"),
		"GET " + repo + "/actions/secrets":                             h(s.listSecrets, pageParams),
		"GET " + repo + "/actions/secrets/public-key":                  h(s.getSecretsPublicKey, nil),
		"GET " + repo + "/actions/secrets/{secret_name}":               h(s.getSecret, nil),
		"PUT " + repo + "/actions/secrets/{secret_name}":               h(s.putSecret, nil, "encrypted_value", "key_id"),
		"DELETE " + repo + "/actions/secrets/{secret_name}":            h(s.deleteSecret, nil),
		"GET " + repo + "/actions/organization-secrets":                h(s.listOrgSecrets, pageParams),
		"GET " + repo + "/actions/workflows":                           h(s.listWorkflows, pageParams),
		"GET " + repo + "/actions/workflows/{workflow_id}":             h(s.getWorkflow, nil),
		"GET /user":       h(s.getUser, nil),
		"GET /rate_limit": h(s.getRateLimit, nil),
	}
}

// run calls the handler, holding the server's mutex unless it only touches git.
func (h handler) run(c *call) (int, any) {
	if !h.noLock {
		c.s.mu.Lock()
		defer c.s.mu.Unlock()
	}
	return h.fn(c)
}

func notFound() (int, any) { return http.StatusNotFound, errorBody("Not Found") }

func unprocessable(msg string) (int, any) {
	return http.StatusUnprocessableEntity, errorBody(msg)
}

// validationFailed is GitHub's 422 with a list of errors.
func validationFailed(errs ...map[string]any) (int, any) {
	list := make([]any, len(errs))
	for i, e := range errs {
		list[i] = e
	}
	b := errorBody("Validation Failed")
	b["errors"] = list
	return http.StatusUnprocessableEntity, b
}

func (c *call) str(key string) (string, bool) {
	v, ok := c.body[key]
	if !ok || v == nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case float64: // an issue title may be a number
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return fmt.Sprint(v), true
}

func (c *call) boolean(key string) bool {
	b, _ := c.body[key].(bool)
	return b
}

func (c *call) number(key string) int {
	n, _ := strconv.Atoi(c.params[key])
	return n
}

// page cuts a list of n items to the requested page and sets GitHub's Link header.
func (c *call) page(n int) (lo, hi int) {
	per := 30
	if v, err := strconv.Atoi(c.query.Get("per_page")); err == nil && v > 0 {
		per = min(v, 100)
	}
	page := 1
	if v, err := strconv.Atoi(c.query.Get("page")); err == nil && v > 0 {
		page = v
	}
	last := max(1, (n+per-1)/per)
	link := func(p int, rel string) string {
		q := c.r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		u := c.s.URL + strings.TrimPrefix(c.r.URL.EscapedPath(), c.s.opts.APIPrefix) + "?" + q.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u, rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(min(page-1, last), "prev"))
	}
	if len(links) > 0 {
		c.w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo = min((page-1)*per, n)
	return lo, min(lo+per, n)
}

func timeJSON(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Server) repoAPI() string {
	return s.URL + "/repos/" + urlPath(s.opts.Owner, s.opts.Repo)
}

func (s *Server) repoHTML() string {
	return s.ServerURL + "/" + urlPath(s.opts.Owner, s.opts.Repo)
}

// userJSON is a simple-user; the caller holds s.mu.
func (s *Server) userJSON(login string) map[string]any {
	id := s.knowUser(login)
	kind := "User"
	if strings.HasSuffix(login, "[bot]") {
		kind = "Bot"
	}
	api := s.URL + "/users/" + url.PathEscape(login)
	return map[string]any{
		"login": login, "id": id, "node_id": fmt.Sprintf("U_%d", id),
		"avatar_url": s.ServerURL + "/avatars/" + url.PathEscape(login), "gravatar_id": "",
		"url": api, "html_url": s.ServerURL + "/" + url.PathEscape(login),
		"followers_url": api + "/followers", "following_url": api + "/following{/other_user}",
		"gists_url": api + "/gists{/gist_id}", "starred_url": api + "/starred{/owner}{/repo}",
		"subscriptions_url": api + "/subscriptions", "organizations_url": api + "/orgs",
		"repos_url": api + "/repos", "events_url": api + "/events{/privacy}",
		"received_events_url": api + "/received_events", "type": kind, "site_admin": false,
	}
}

// usersJSON is a list of simple-users; the caller holds s.mu.
func (s *Server) usersJSON(logins []string) []any {
	out := []any{}
	for _, l := range logins {
		out = append(out, s.userJSON(l))
	}
	return out
}

func (s *Server) association(login string) string {
	switch {
	case strings.EqualFold(login, s.opts.Owner):
		return "OWNER"
	case s.perms[login] == "admin" || s.perms[login] == "maintain" || s.perms[login] == "write":
		return "COLLABORATOR"
	}
	return "NONE"
}

func (s *Server) getRepo(c *call) (int, any) {
	return http.StatusOK, s.repoJSON()
}

func (s *Server) repoJSON() map[string]any {
	api := s.repoAPI()
	open := 0
	for _, is := range s.issues {
		if is.state == "open" {
			open++
		}
	}
	return map[string]any{
		"id": 1296269, "node_id": "R_1296269", "name": s.opts.Repo,
		"full_name": s.opts.Owner + "/" + s.opts.Repo, "owner": s.userJSON(s.opts.Owner),
		"private": false, "visibility": "public", "html_url": s.repoHTML(), "description": nil,
		"fork": false, "url": api, "default_branch": s.opts.DefaultBranch,
		"clone_url": s.repoHTML() + ".git", "git_url": strings.Replace(s.repoHTML(), "http", "git", 1) + ".git",
		"issues_url": api + "/issues{/number}", "pulls_url": api + "/pulls{/number}",
		"labels_url": api + "/labels{/name}", "git_refs_url": api + "/git/refs{/sha}",
		"archived": false, "disabled": false, "has_issues": true, "has_projects": true, "has_wiki": false,
		"open_issues_count": open, "open_issues": open,
		"permissions": map[string]any{"admin": false, "maintain": false, "push": true, "triage": true, "pull": true},
		"created_at":  "2024-01-01T00:00:00Z", "updated_at": timeJSON(s.now()), "pushed_at": timeJSON(s.now()),
	}
}

// Issues.

func (s *Server) issueOr404(c *call) *issue {
	return s.issues[c.number("issue_number")]
}

func (s *Server) commentCount(n int) int {
	k := 0
	for _, c := range s.comments {
		if c.issue == n {
			k++
		}
	}
	return k
}

func (s *Server) issueJSON(is *issue) map[string]any {
	api := fmt.Sprintf("%s/issues/%d", s.repoAPI(), is.number)
	html := fmt.Sprintf("%s/issues/%d", s.repoHTML(), is.number)
	var reason any
	if is.pull == nil {
		reason = nullable(is.stateReason)
	}
	m := map[string]any{
		"id": is.id, "node_id": fmt.Sprintf("I_%d", is.id), "url": api,
		"repository_url": s.repoAPI(), "labels_url": api + "/labels{/name}",
		"comments_url": api + "/comments", "events_url": api + "/events", "html_url": html,
		"number": is.number, "state": is.state, "state_reason": reason, "title": is.title,
		"body": nullable(is.body), "user": s.userJSON(is.author), "labels": s.labelsJSON(is.labels),
		"assignee": nil, "assignees": []any{}, "milestone": nil, "locked": false, "active_lock_reason": nil,
		"comments": s.commentCount(is.number), "closed_at": timeJSON(is.closed),
		"created_at": timeJSON(is.created), "updated_at": timeJSON(is.updated),
		"author_association": s.association(is.author),
	}
	if is.pull == nil {
		m["issue_dependencies_summary"] = s.dependencies(is.number)
	}
	if is.pull != nil {
		m["html_url"] = fmt.Sprintf("%s/pull/%d", s.repoHTML(), is.number)
		m["pull_request"] = map[string]any{
			"url":       fmt.Sprintf("%s/pulls/%d", s.repoAPI(), is.number),
			"html_url":  m["html_url"],
			"diff_url":  fmt.Sprintf("%s/pull/%d.diff", s.repoHTML(), is.number),
			"patch_url": fmt.Sprintf("%s/pull/%d.patch", s.repoHTML(), is.number),
			"merged_at": timeJSON(is.pull.mergedAt),
		}
		m["draft"] = is.pull.draft
	}
	return m
}

func (s *Server) listIssues(c *call) (int, any) {
	state := c.query.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := c.query.Get("labels"); l != "" {
		for _, name := range strings.Split(l, ",") {
			want = append(want, strings.TrimSpace(name))
		}
	}
	var list []*issue
	for _, is := range s.sortedIssues() {
		if state != "all" && is.state != state {
			continue
		}
		if !hasAllLabels(is.labels, want) {
			continue
		}
		list = append(list, is)
	}
	sortIssues(list, c.query.Get("sort"), c.query.Get("direction"), s.commentCount)
	lo, hi := c.page(len(list))
	out := []any{}
	for _, is := range list[lo:hi] {
		out = append(out, s.issueJSON(is))
	}
	return http.StatusOK, out
}

func hasAllLabels(have, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			return false
		}
	}
	return true
}

// sortIssues orders by created (default), updated or comments; descending by default.
// Ties keep number order, since timestamps have only second resolution.
func sortIssues(list []*issue, by, direction string, comments func(int) int) {
	key := func(is *issue) int64 {
		switch by {
		case "updated":
			return is.updated.Unix()
		case "comments":
			return int64(comments(is.number))
		}
		return is.created.Unix()
	}
	asc := direction == "asc"
	sort.SliceStable(list, func(i, j int) bool {
		ki, kj := key(list[i]), key(list[j])
		if ki == kj {
			if asc {
				return list[i].number < list[j].number
			}
			return list[i].number > list[j].number
		}
		if asc {
			return ki < kj
		}
		return ki > kj
	})
}

func (s *Server) createIssue(c *call) (int, any) {
	title, _ := c.str("title")
	body, _ := c.str("body")
	is := s.newIssue(s.opts.TokenLogin, title, body)
	for _, l := range labelNames(c.body["labels"]) {
		s.addLabel(is, l, s.opts.TokenLogin)
	}
	c.w.Header().Set("Location", fmt.Sprintf("%s/issues/%d", s.repoAPI(), is.number))
	return http.StatusCreated, s.issueJSON(is)
}

func (s *Server) getIssue(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	return http.StatusOK, s.issueJSON(is)
}

func (s *Server) updateIssue(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	if v, ok := c.str("title"); ok {
		is.title = v
	}
	if _, ok := c.body["body"]; ok {
		is.body, _ = c.str("body")
	}
	if v, ok := c.str("state"); ok {
		reason, _ := c.str("state_reason")
		s.setState(is, v, reason)
	}
	if _, ok := c.body["labels"]; ok {
		s.setLabels(is, labelNames(c.body["labels"]), s.opts.TokenLogin)
	}
	is.updated = s.now()
	return http.StatusOK, s.issueJSON(is)
}

// setState opens or closes an issue; reason applies to issues, not pulls.
func (s *Server) setState(is *issue, state, reason string) {
	if state == is.state {
		return
	}
	now := s.now()
	is.state, is.updated = state, now
	switch {
	case is.pull != nil:
		is.stateReason = ""
	case state == "closed":
		is.stateReason = reason
		if reason == "" || reason == "reopened" {
			is.stateReason = "completed"
		}
	default:
		is.stateReason = "reopened"
	}
	if state == "closed" {
		is.closed = now
	} else {
		is.closed = time.Time{}
	}
}

var closingRE = regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)\b`)

// Labels.

// labelNames reads labels given as names or as {"name": …} objects.
func labelNames(v any) []string {
	var out []string
	items, _ := v.([]any)
	for _, it := range items {
		switch it := it.(type) {
		case string:
			out = append(out, it)
		case map[string]any:
			if n, ok := it["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

func (s *Server) findLabel(name string) *label {
	for _, l := range s.labels {
		if strings.EqualFold(l.name, name) {
			return l
		}
	}
	return nil
}

// repoLabel finds a repository label or creates it, as GitHub does when a label is
// added to an issue by a name the repository does not have yet.
func (s *Server) repoLabel(name string) *label {
	if l := s.findLabel(name); l != nil {
		return l
	}
	l := &label{id: s.newID(), name: name, color: "ededed"}
	s.labels = append(s.labels, l)
	return l
}

func (s *Server) labelJSON(l *label) map[string]any {
	return map[string]any{
		"id": l.id, "node_id": fmt.Sprintf("LA_%d", l.id), "url": s.repoAPI() + "/labels/" + url.PathEscape(l.name),
		"name": l.name, "color": l.color, "description": nullable(l.description), "default": false,
	}
}

func (s *Server) labelsJSON(names []string) []any {
	out := []any{}
	for _, n := range names {
		out = append(out, s.labelJSON(s.repoLabel(n)))
	}
	return out
}

func (s *Server) addLabel(is *issue, name, actor string) {
	l := s.repoLabel(name)
	if slices.Contains(is.labels, l.name) {
		return
	}
	is.labels = append(is.labels, l.name)
	sort.Strings(is.labels)
	s.event(is, "labeled", actor, l)
}

func (s *Server) removeLabel(is *issue, name, actor string) bool {
	i := slices.IndexFunc(is.labels, func(h string) bool { return strings.EqualFold(h, name) })
	if i < 0 {
		return false
	}
	l := s.repoLabel(is.labels[i])
	is.labels = slices.Delete(is.labels, i, i+1)
	s.event(is, "unlabeled", actor, l)
	return true
}

func (s *Server) setLabels(is *issue, names []string, actor string) {
	for _, have := range slices.Clone(is.labels) {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, have) }) {
			s.removeLabel(is, have, actor)
		}
	}
	for _, n := range names {
		s.addLabel(is, n, actor)
	}
}

func (s *Server) event(is *issue, kind, actor string, l *label) {
	now := s.now()
	s.events = append(s.events, &event{id: s.newID(), issue: is.number, kind: kind, actor: actor,
		label: l.name, color: l.color, created: now})
	is.updated = now
	s.knowUser(actor)
}

func (s *Server) listLabels(c *call) (int, any) {
	lo, hi := c.page(len(s.labels))
	out := []any{}
	for _, l := range s.labels[lo:hi] {
		out = append(out, s.labelJSON(l))
	}
	return http.StatusOK, out
}

func (s *Server) createLabel(c *call) (int, any) {
	name, _ := c.str("name")
	if s.findLabel(name) != nil {
		return validationFailed(map[string]any{"resource": "Label", "code": "already_exists", "field": "name"})
	}
	color, _ := c.str("color")
	if color == "" {
		color = "ededed"
	}
	color = strings.TrimPrefix(color, "#")
	desc, _ := c.str("description")
	l := &label{id: s.newID(), name: name, color: color, description: desc}
	s.labels = append(s.labels, l)
	return http.StatusCreated, s.labelJSON(l)
}

func (s *Server) getLabel(c *call) (int, any) {
	l := s.findLabel(c.params["name"])
	if l == nil {
		return notFound()
	}
	return http.StatusOK, s.labelJSON(l)
}

func (s *Server) listIssueLabels(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	lo, hi := c.page(len(is.labels))
	return http.StatusOK, s.labelsJSON(is.labels[lo:hi])
}

func (s *Server) addIssueLabels(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	for _, n := range labelNames(c.body["labels"]) {
		s.addLabel(is, n, s.opts.TokenLogin)
	}
	return http.StatusOK, s.labelsJSON(is.labels)
}

func (s *Server) setIssueLabels(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	s.setLabels(is, labelNames(c.body["labels"]), s.opts.TokenLogin)
	return http.StatusOK, s.labelsJSON(is.labels)
}

func (s *Server) clearIssueLabels(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	s.setLabels(is, nil, s.opts.TokenLogin)
	return http.StatusNoContent, nil
}

func (s *Server) removeIssueLabel(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	if !s.removeLabel(is, c.params["name"], s.opts.TokenLogin) {
		return http.StatusNotFound, errorBody("Label does not exist")
	}
	return http.StatusOK, s.labelsJSON(is.labels)
}

func (s *Server) listIssueEvents(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	var list []*event
	for _, e := range s.events {
		if e.issue == is.number {
			list = append(list, e)
		}
	}
	lo, hi := c.page(len(list))
	out := []any{}
	for _, e := range list[lo:hi] {
		out = append(out, map[string]any{
			"id": e.id, "node_id": fmt.Sprintf("LE_%d", e.id), "url": fmt.Sprintf("%s/issues/events/%d", s.repoAPI(), e.id),
			"actor": s.userJSON(e.actor), "event": e.kind, "commit_id": nil, "commit_url": nil,
			"created_at": timeJSON(e.created), "label": map[string]any{"name": e.label, "color": e.color},
			"performed_via_github_app": nil,
		})
	}
	return http.StatusOK, out
}

// Comments.

func (s *Server) commentJSON(cm *comment) map[string]any {
	return map[string]any{
		"id": cm.id, "node_id": fmt.Sprintf("IC_%d", cm.id),
		"url":       fmt.Sprintf("%s/issues/comments/%d", s.repoAPI(), cm.id),
		"html_url":  fmt.Sprintf("%s/issues/%d#issuecomment-%d", s.repoHTML(), cm.issue, cm.id),
		"issue_url": fmt.Sprintf("%s/issues/%d", s.repoAPI(), cm.issue),
		"body":      cm.body, "user": s.userJSON(cm.user),
		"created_at": timeJSON(cm.created), "updated_at": timeJSON(cm.updated),
		"author_association": s.association(cm.user),
	}
}

func (s *Server) findComment(c *call) *comment {
	id, _ := strconv.ParseInt(c.params["comment_id"], 10, 64)
	for _, cm := range s.comments {
		if cm.id == id {
			return cm
		}
	}
	return nil
}

func (s *Server) listComments(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	var list []*comment
	for _, cm := range s.comments {
		if cm.issue == is.number {
			list = append(list, cm)
		}
	}
	lo, hi := c.page(len(list))
	out := []any{}
	for _, cm := range list[lo:hi] {
		out = append(out, s.commentJSON(cm))
	}
	return http.StatusOK, out
}

func (s *Server) createComment(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	body, _ := c.str("body")
	cm := s.addComment(is.number, s.opts.TokenLogin, body)
	is.updated = cm.created
	c.w.Header().Set("Location", fmt.Sprintf("%s/issues/comments/%d", s.repoAPI(), cm.id))
	return http.StatusCreated, s.commentJSON(cm)
}

func (s *Server) getComment(c *call) (int, any) {
	cm := s.findComment(c)
	if cm == nil {
		return notFound()
	}
	return http.StatusOK, s.commentJSON(cm)
}

func (s *Server) updateComment(c *call) (int, any) {
	cm := s.findComment(c)
	if cm == nil {
		return notFound()
	}
	cm.body, _ = c.str("body")
	cm.updated = s.now()
	return http.StatusOK, s.commentJSON(cm)
}

func (s *Server) deleteComment(c *call) (int, any) {
	cm := s.findComment(c)
	if cm == nil {
		return notFound()
	}
	s.comments = slices.DeleteFunc(s.comments, func(x *comment) bool { return x == cm })
	return http.StatusNoContent, nil
}

// Pull requests.

// headSHA is the branch tip while the pull is open, and frozen once it is closed.
func (s *Server) headSHA(is *issue) string {
	if is.state == "open" {
		if sha := s.branchSHA(is.pull.head); sha != "" {
			return sha
		}
	}
	return is.pull.headSHA
}

func (s *Server) pullJSON(is *issue, full bool) map[string]any {
	p := is.pull
	api := fmt.Sprintf("%s/pulls/%d", s.repoAPI(), is.number)
	html := fmt.Sprintf("%s/pull/%d", s.repoHTML(), is.number)
	issueAPI := fmt.Sprintf("%s/issues/%d", s.repoAPI(), is.number)
	head := s.headSHA(is)
	href := func(u string) map[string]any { return map[string]any{"href": u} }
	side := func(ref, sha string) map[string]any {
		return map[string]any{"label": s.opts.Owner + ":" + ref, "ref": ref, "sha": sha,
			"user": s.userJSON(s.opts.Owner), "repo": s.repoJSON()}
	}
	m := map[string]any{
		"url": api, "id": is.id, "node_id": fmt.Sprintf("PR_%d", is.id), "html_url": html,
		"diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": issueAPI,
		"commits_url": api + "/commits", "review_comments_url": api + "/comments",
		"review_comment_url": s.repoAPI() + "/pulls/comments{/number}", "comments_url": issueAPI + "/comments",
		"statuses_url": s.repoAPI() + "/statuses/" + head, "number": is.number, "state": is.state,
		"locked": false, "title": is.title, "user": s.userJSON(is.author), "body": nullable(is.body),
		"labels": s.labelsJSON(is.labels), "milestone": nil, "active_lock_reason": nil,
		"created_at": timeJSON(is.created), "updated_at": timeJSON(is.updated),
		"closed_at": timeJSON(is.closed), "merged_at": timeJSON(p.mergedAt), "merge_commit_sha": nil,
		"assignee": nil, "assignees": []any{}, "requested_reviewers": s.usersJSON(p.requested), "requested_teams": []any{},
		"head": side(p.head, head), "base": side(p.base, s.branchSHA(p.base)),
		"_links": map[string]any{
			"self": href(api), "html": href(html), "issue": href(issueAPI), "comments": href(issueAPI + "/comments"),
			"review_comments": href(api + "/comments"), "review_comment": href(s.repoAPI() + "/pulls/comments{/number}"),
			"commits": href(api + "/commits"), "statuses": href(s.repoAPI() + "/statuses/" + head),
		},
		"author_association": s.association(is.author), "auto_merge": nil, "draft": p.draft,
	}
	if full {
		var mergedBy any
		if p.merged {
			mergedBy = s.userJSON(s.opts.Owner)
		}
		m["merged"] = p.merged
		m["mergeable"] = nil
		m["mergeable_state"] = "unknown"
		m["merged_by"] = mergedBy
		m["comments"] = s.commentCount(is.number)
		m["review_comments"] = 0
		m["maintainer_can_modify"] = p.maintainerCanModify
		m["commits"] = 1
		m["additions"] = 0
		m["deletions"] = 0
		m["changed_files"] = 0
	}
	return m
}

func (s *Server) listPulls(c *call) (int, any) {
	state := c.query.Get("state")
	if state == "" {
		state = "open"
	}
	head := c.query.Get("head")
	if head != "" {
		owner, branch, ok := strings.Cut(head, ":")
		if !ok {
			// GitHub wants user:ref-name; what it does with a bare branch name is not
			// something a client should rely on, so refuse it loudly.
			return unprocessable(fmt.Sprintf("githubtest: head %q must be in the form user:ref-name", head))
		}
		if !strings.EqualFold(owner, s.opts.Owner) {
			return http.StatusOK, []any{}
		}
		head = branch
	}
	base := c.query.Get("base")
	var list []*issue
	for _, is := range s.sortedIssues() {
		if is.pull == nil || (state != "all" && is.state != state) ||
			(head != "" && is.pull.head != head) || (base != "" && is.pull.base != base) {
			continue
		}
		list = append(list, is)
	}
	sortIssues(list, c.query.Get("sort"), c.query.Get("direction"), s.commentCount)
	lo, hi := c.page(len(list))
	out := []any{}
	for _, is := range list[lo:hi] {
		out = append(out, s.pullJSON(is, false))
	}
	return http.StatusOK, out
}

func (s *Server) createPull(c *call) (int, any) {
	if s.opts.TokenLogin == BotLogin && !s.actions.canApprovePRs {
		return http.StatusForbidden, errorBody("GitHub Actions is not permitted to create or approve pull requests.")
	}
	title, _ := c.str("title")
	head, _ := c.str("head")
	base, _ := c.str("base")
	body, _ := c.str("body")
	if owner, branch, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(owner, s.opts.Owner) {
			return validationFailed(map[string]any{"resource": "PullRequest", "field": "head", "code": "invalid"})
		}
		head = branch
	}
	if title == "" {
		return validationFailed(map[string]any{"resource": "PullRequest", "field": "title", "code": "missing_field"})
	}
	baseSHA := s.branchSHA(base)
	if baseSHA == "" {
		return validationFailed(map[string]any{"resource": "PullRequest", "field": "base", "code": "invalid"})
	}
	headSHA := s.branchSHA(head)
	if headSHA == "" {
		return validationFailed(map[string]any{"resource": "PullRequest", "field": "head", "code": "invalid"})
	}
	for _, is := range s.issues {
		if is.pull != nil && is.state == "open" && is.pull.head == head && is.pull.base == base {
			return validationFailed(map[string]any{"resource": "PullRequest", "code": "custom",
				"message": fmt.Sprintf("A pull request already exists for %s:%s.", s.opts.Owner, head)})
		}
	}
	if n, err := s.git(nil, "rev-list", "--count", baseSHA+".."+headSHA); err != nil || n == "0" {
		return validationFailed(map[string]any{"resource": "PullRequest", "code": "custom",
			"message": fmt.Sprintf("No commits between %s and %s", base, head)})
	}
	is := s.newIssue(s.opts.TokenLogin, title, body)
	is.pull = &pull{head: head, base: base, draft: c.boolean("draft"), headSHA: headSHA, maintainerCanModify: true}
	c.w.Header().Set("Location", fmt.Sprintf("%s/pulls/%d", s.repoAPI(), is.number))
	return http.StatusCreated, s.pullJSON(is, true)
}

func (s *Server) pullOr404(c *call) *issue {
	is := s.issues[c.number("pull_number")]
	if is == nil || is.pull == nil {
		return nil
	}
	return is
}

func (s *Server) getPull(c *call) (int, any) {
	is := s.pullOr404(c)
	if is == nil {
		return notFound()
	}
	return http.StatusOK, s.pullJSON(is, true)
}

func (s *Server) updatePull(c *call) (int, any) {
	is := s.pullOr404(c)
	if is == nil {
		return notFound()
	}
	if v, ok := c.str("base"); ok {
		if s.branchSHA(v) == "" {
			return validationFailed(map[string]any{"resource": "PullRequest", "field": "base", "code": "invalid"})
		}
		is.pull.base = v
	}
	if v, ok := c.str("state"); ok && v != is.state {
		if v == "open" && is.pull.merged {
			return validationFailed(map[string]any{"resource": "PullRequest", "code": "custom",
				"message": "state cannot be changed. The pull request cannot be reopened because it has been merged."})
		}
		is.pull.headSHA = s.headSHA(is)
		s.setState(is, v, "")
	}
	if v, ok := c.str("title"); ok {
		is.title = v
	}
	if _, ok := c.body["body"]; ok {
		is.body, _ = c.str("body")
	}
	if _, ok := c.body["maintainer_can_modify"]; ok {
		is.pull.maintainerCanModify = c.boolean("maintainer_can_modify")
	}
	is.updated = s.now()
	return http.StatusOK, s.pullJSON(is, true)
}

// Git data.

func (s *Server) refJSON(r gitRef) map[string]any {
	short := strings.TrimPrefix(r.name, "refs/")
	return map[string]any{
		"ref": r.name, "node_id": "REF_" + base64.RawURLEncoding.EncodeToString([]byte(r.name)),
		"url":    s.repoAPI() + "/git/refs/" + short,
		"object": map[string]any{"type": r.kind, "sha": r.sha, "url": s.repoAPI() + "/git/" + r.kind + "s/" + r.sha},
	}
}

func (s *Server) getRef(c *call) (int, any) {
	r, ok, err := s.ref("refs/" + c.params["ref"])
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	if !ok {
		return notFound()
	}
	return http.StatusOK, s.refJSON(r)
}

func (s *Server) matchingRefs(c *call) (int, any) {
	refs, err := s.refs("refs/" + c.params["ref"])
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	out := []any{}
	for _, r := range refs {
		out = append(out, s.refJSON(r))
	}
	return http.StatusOK, out
}

func (s *Server) createRefOp(c *call) (int, any) {
	name, _ := c.str("ref")
	sha, _ := c.str("sha")
	if !strings.HasPrefix(name, "refs/") || strings.Count(name, "/") < 2 {
		return unprocessable(fmt.Sprintf("%s is not a valid ref name.", name))
	}
	if _, err := s.git(nil, "check-ref-format", name); err != nil {
		return unprocessable(fmt.Sprintf("%s is not a valid ref name.", name))
	}
	if s.objectType(sha) == "" {
		return unprocessable("Object does not exist")
	}
	if err := s.createRef(name, sha); err == errRefExists {
		return unprocessable("Reference already exists")
	} else if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	r, _, err := s.ref(name)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	c.w.Header().Set("Location", s.repoAPI()+"/git/"+name)
	return http.StatusCreated, s.refJSON(r)
}

func (s *Server) updateRefOp(c *call) (int, any) {
	name := "refs/" + c.params["ref"]
	sha, _ := c.str("sha")
	old, ok, err := s.ref(name)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	if !ok {
		return unprocessable("Reference does not exist")
	}
	if s.objectType(sha) == "" {
		return unprocessable("Object does not exist")
	}
	if !c.boolean("force") && !s.isAncestor(old.sha, sha) {
		return unprocessable("Update is not a fast forward")
	}
	if err := s.updateRef(name, sha, old.sha); err != nil {
		// Moved by someone else since we read it: GitHub refuses too.
		return unprocessable("Reference cannot be updated")
	}
	r, _, err := s.ref(name)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	return http.StatusOK, s.refJSON(r)
}

func (s *Server) deleteRefOp(c *call) (int, any) {
	name := "refs/" + c.params["ref"]
	old, ok, err := s.ref(name)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	if !ok {
		return unprocessable("Reference does not exist")
	}
	if err := s.retryLocked(func() error {
		_, err := s.git(nil, "update-ref", "-d", name, old.sha)
		return err
	}); err != nil {
		return unprocessable("Reference cannot be deleted")
	}
	return http.StatusNoContent, nil
}

func (s *Server) personJSON(p gitPerson) map[string]any {
	return map[string]any{"name": p.name, "email": p.email, "date": timeJSON(p.date)}
}

func (s *Server) parentsJSON(parents []string) []any {
	out := []any{}
	for _, p := range parents {
		out = append(out, map[string]any{"sha": p, "url": s.repoAPI() + "/git/commits/" + p,
			"html_url": s.repoHTML() + "/commit/" + p})
	}
	return out
}

func (s *Server) gitCommitJSON(gc gitCommit) map[string]any {
	return map[string]any{
		"sha": gc.sha, "node_id": "C_" + gc.sha, "url": s.repoAPI() + "/git/commits/" + gc.sha,
		"html_url": s.repoHTML() + "/commit/" + gc.sha,
		"author":   s.personJSON(gc.author), "committer": s.personJSON(gc.committer), "message": gc.message,
		"tree":    map[string]any{"sha": gc.tree, "url": s.repoAPI() + "/git/trees/" + gc.tree},
		"parents": s.parentsJSON(gc.parents),
		"verification": map[string]any{"verified": false, "reason": "unsigned", "signature": nil,
			"payload": nil, "verified_at": nil},
	}
}

// commitJSON is a commit as the repository-commits endpoints show it.
func (s *Server) commitJSON(gc gitCommit) map[string]any {
	return map[string]any{
		"sha": gc.sha, "node_id": "C_" + gc.sha, "url": s.repoAPI() + "/commits/" + gc.sha,
		"html_url": s.repoHTML() + "/commit/" + gc.sha, "comments_url": s.repoAPI() + "/commits/" + gc.sha + "/comments",
		"commit": map[string]any{
			"url": s.repoAPI() + "/git/commits/" + gc.sha, "author": s.personJSON(gc.author),
			"committer": s.personJSON(gc.committer), "message": gc.message, "comment_count": 0,
			"tree": map[string]any{"sha": gc.tree, "url": s.repoAPI() + "/git/trees/" + gc.tree},
		},
		"author": nil, "committer": nil, "parents": s.parentsJSON(gc.parents),
	}
}

func (s *Server) getBranch(c *call) (int, any) {
	name := c.params["branch"]
	sha := s.branchSHA(name)
	if sha == "" {
		return http.StatusNotFound, errorBody("Branch not found")
	}
	gc, err := s.readCommit(sha)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	api := s.repoAPI() + "/branches/" + name
	return http.StatusOK, map[string]any{
		"name": name, "commit": s.commitJSON(gc), "protected": false, "protection_url": api + "/protection",
		"protection": map[string]any{"enabled": false,
			"required_status_checks": map[string]any{"enforcement_level": "off", "contexts": []any{}, "checks": []any{}}},
		"_links": map[string]any{"self": api, "html": s.repoHTML() + "/tree/" + name},
	}
}

func (s *Server) getCommit(c *call) (int, any) {
	ref := c.params["ref"]
	sha := s.resolveCommit(ref)
	if sha == "" {
		return unprocessable("No commit found for SHA: " + ref)
	}
	gc, err := s.readCommit(sha)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	return http.StatusOK, s.commitJSON(gc)
}

func (s *Server) createBlob(c *call) (int, any) {
	content, _ := c.str("content")
	data := []byte(content)
	switch enc, _ := c.str("encoding"); enc {
	case "", "utf-8":
	case "base64":
		d, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(content, "\n", ""))
		if err != nil {
			return unprocessable("content is not valid Base64")
		}
		data = d
	default:
		return unprocessable(fmt.Sprintf("encoding %q is not supported", enc))
	}
	sha, err := s.git(strings.NewReader(string(data)), "hash-object", "-w", "--stdin")
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	return http.StatusCreated, map[string]any{"url": s.repoAPI() + "/git/blobs/" + sha, "sha": sha}
}

func (s *Server) getBlob(c *call) (int, any) {
	sha := c.params["file_sha"]
	if s.objectType(sha) != "blob" {
		return notFound()
	}
	data, err := gitCommand(s.BareRepo, nil, "cat-file", "blob", sha).Output()
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	// GitHub wraps Base64 content at 60 characters.
	enc := base64.StdEncoding.EncodeToString(data)
	var lines []string
	for len(enc) > 60 {
		lines, enc = append(lines, enc[:60]), enc[60:]
	}
	lines = append(lines, enc)
	return http.StatusOK, map[string]any{
		"sha": sha, "node_id": "B_" + sha, "url": s.repoAPI() + "/git/blobs/" + sha, "size": len(data),
		"content": strings.Join(lines, "\n") + "\n", "encoding": "base64",
	}
}

func personArg(v any) (*gitPerson, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil
	}
	p := &gitPerson{}
	p.name, _ = m["name"].(string)
	p.email, _ = m["email"].(string)
	if d, ok := m["date"].(string); ok {
		t, err := time.Parse(time.RFC3339, d)
		if err != nil {
			return nil, fmt.Errorf("date %q is not an ISO 8601 timestamp", d)
		}
		p.date = t
	}
	return p, nil
}

func (s *Server) createGitCommit(c *call) (int, any) {
	message, _ := c.str("message")
	tree, _ := c.str("tree")
	if s.objectType(tree) != "tree" {
		return unprocessable("Tree SHA does not exist")
	}
	var parents []string
	ps, _ := c.body["parents"].([]any)
	for _, p := range ps {
		sha, _ := p.(string)
		if s.objectType(sha) != "commit" {
			return unprocessable("Parent SHA does not exist or is not a commit object")
		}
		parents = append(parents, sha)
	}
	author, err := personArg(c.body["author"])
	if err != nil {
		return unprocessable("Invalid request.\n\nauthor: " + err.Error())
	}
	committer, err := personArg(c.body["committer"])
	if err != nil {
		return unprocessable("Invalid request.\n\ncommitter: " + err.Error())
	}
	if committer == nil {
		committer = author
	}
	sha, err := s.writeCommit(tree, parents, message, author, committer)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	gc, err := s.readCommit(sha)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	c.w.Header().Set("Location", s.repoAPI()+"/git/commits/"+sha)
	return http.StatusCreated, s.gitCommitJSON(gc)
}

func (s *Server) getGitCommit(c *call) (int, any) {
	sha := c.params["commit_sha"]
	if s.objectType(sha) != "commit" {
		return notFound()
	}
	gc, err := s.readCommit(sha)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	return http.StatusOK, s.gitCommitJSON(gc)
}

// Collaborators, Actions, users.

func (s *Server) getPermission(c *call) (int, any) {
	user := c.params["username"]
	if _, known := s.userIDs[user]; !known {
		return notFound()
	}
	role := s.perms[user]
	if role == "" {
		role = "none"
	}
	// The legacy permission maps maintain to write and triage to read; role_name is exact.
	perm := map[string]string{"maintain": "write", "triage": "read"}[role]
	if perm == "" {
		perm = role
	}
	u := s.userJSON(user)
	u["role_name"] = role
	u["permissions"] = map[string]any{
		"admin": role == "admin", "maintain": role == "admin" || role == "maintain",
		"push": perm == "admin" || perm == "write", "triage": role != "read" && role != "none",
		"pull": role != "none",
	}
	return http.StatusOK, map[string]any{"permission": perm, "role_name": role, "user": u}
}

func (s *Server) dispatch(c *call) (int, any) {
	ref, _ := c.str("ref")
	if s.resolveCommit(ref) == "" || isSHA(ref) {
		return unprocessable("No ref found for: " + ref)
	}
	inputs, _ := c.body["inputs"].(map[string]any)
	s.dispatches = append(s.dispatches, Dispatch{Workflow: c.params["workflow_id"], Ref: ref, Inputs: inputs})
	if !c.boolean("return_run_details") {
		return http.StatusNoContent, nil
	}
	var id int64 = 9000
	for k := range s.runs {
		id = max(id, k)
	}
	id++
	now := s.now()
	s.runs[id] = &run{id: id, status: "queued", created: now, updated: now}
	return http.StatusOK, map[string]any{
		"workflow_run_id": id, "run_url": fmt.Sprintf("%s/actions/runs/%d", s.repoAPI(), id),
		"html_url": fmt.Sprintf("%s/actions/runs/%d", s.repoHTML(), id),
	}
}

func (s *Server) getRun(c *call) (int, any) {
	id, _ := strconv.ParseInt(c.params["run_id"], 10, 64)
	r := s.runs[id]
	if r == nil {
		return notFound()
	}
	api := fmt.Sprintf("%s/actions/runs/%d", s.repoAPI(), id)
	return http.StatusOK, map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("WFR_%d", r.id), "name": "ralph", "display_title": "ralph",
		"head_branch": s.opts.DefaultBranch, "head_sha": s.branchSHA(s.opts.DefaultBranch),
		"path": ".github/workflows/ralph.yml", "run_number": r.id, "run_attempt": 1, "event": "workflow_dispatch",
		"status": r.status, "conclusion": nullable(r.conclusion), "workflow_id": 1,
		"url": api, "html_url": fmt.Sprintf("%s/actions/runs/%d", s.repoHTML(), r.id),
		"created_at": timeJSON(r.created), "updated_at": timeJSON(r.updated), "run_started_at": timeJSON(r.created),
		"jobs_url": api + "/jobs", "logs_url": api + "/logs", "check_suite_url": s.repoAPI() + "/check-suites/1",
		"artifacts_url": api + "/artifacts", "cancel_url": api + "/cancel", "rerun_url": api + "/rerun",
		"workflow_url": s.repoAPI() + "/actions/workflows/1", "pull_requests": []any{}, "head_commit": nil,
	}
}

func (s *Server) getUser(c *call) (int, any) {
	u := s.userJSON(s.opts.TokenLogin)
	for k, v := range map[string]any{
		"name": nil, "company": nil, "blog": "", "location": nil, "email": nil, "hireable": nil, "bio": nil,
		"public_repos": 0, "public_gists": 0, "followers": 0, "following": 0,
		"created_at": "2018-07-30T16:30:20Z", "updated_at": "2018-07-30T16:30:20Z", "user_view_type": "public",
	} {
		u[k] = v
	}
	return http.StatusOK, u
}

func (s *Server) getRateLimit(c *call) (int, any) {
	rl := func() map[string]any {
		return map[string]any{"limit": 5000, "remaining": 4999, "used": 1, "reset": s.now().Add(time.Hour).Unix()}
	}
	return http.StatusOK, map[string]any{
		"resources": map[string]any{"core": rl(), "graphql": rl(), "search": rl()},
		"rate":      rl(),
	}
}
