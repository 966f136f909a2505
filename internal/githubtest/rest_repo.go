// The test server's REST handlers: collaborators, actions, users.

package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

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
	if s.opts.DispatchInputs != nil {
		var unexpected []string
		for k := range inputs {
			if !slices.Contains(s.opts.DispatchInputs, k) {
				unexpected = append(unexpected, strconv.Quote(k))
			}
		}
		if len(unexpected) > 0 {
			slices.Sort(unexpected)
			return unprocessable("Unexpected inputs provided: [" + strings.Join(unexpected, ", ") + "]")
		}
	}
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
	title := "ralph"
	if s.opts.RunName != nil {
		title = s.opts.RunName(inputs)
	}
	s.runs[id] = &run{id: id, status: "queued", created: now, updated: now, title: title}
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
	return http.StatusOK, s.runJSON(r)
}

// listRuns lists the repository's workflow runs, newest first, filtered by status (queued, in_progress,
// completed, …) when asked, one page.
func (s *Server) listRuns(c *call) (int, any) {
	status, _ := c.str("status")
	var ids []int64
	for id, r := range s.runs {
		if status == "" || r.status == status || status == r.conclusion {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b int64) int { return int(b - a) })
	per := 30
	if v, ok := c.str("per_page"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= 100 {
			per = n
		}
	}
	runs := []any{}
	for _, id := range ids[:min(per, len(ids))] {
		runs = append(runs, s.runJSON(s.runs[id]))
	}
	return http.StatusOK, map[string]any{"total_count": len(ids), "workflow_runs": runs}
}

func (s *Server) runJSON(r *run) map[string]any {
	api := fmt.Sprintf("%s/actions/runs/%d", s.repoAPI(), r.id)
	title := r.title
	if title == "" {
		title = "ralph"
	}
	return map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("WFR_%d", r.id), "name": "ralph", "display_title": title,
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
