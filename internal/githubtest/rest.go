package githubtest

import (
	"fmt"
	"net/http"
	"net/url"
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
		"POST " + repo + "/git/commits":             git(s.createGitCommit, "message", "tree", "parents", "author", "committer", "signature"),
		"GET " + repo + "/git/commits/{commit_sha}": git(s.getGitCommit),

		"GET " + repo + "/collaborators/{username}/permission":         h(s.getPermission, nil),
		"POST " + repo + "/actions/workflows/{workflow_id}/dispatches": h(s.dispatch, nil, "ref", "inputs", "return_run_details"),
		"GET " + repo + "/actions/runs/{run_id}":                       h(s.getRun, nil),
		"GET " + repo + "/actions/runs":                                h(s.listRuns, append([]string{"status"}, pageParams...)),
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
		"GET " + repo + "/rules/branches/{branch}":                     h(s.getBranchRules, pageParams),
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
	visibility := "public"
	if s.opts.Private {
		visibility = "private"
	}
	return map[string]any{
		"id": 1296269, "node_id": "R_1296269", "name": s.opts.Repo,
		"full_name": s.opts.Owner + "/" + s.opts.Repo, "owner": s.userJSON(s.opts.Owner),
		"private": s.opts.Private, "visibility": visibility, "html_url": s.repoHTML(), "description": nil,
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
