// The test server's REST handlers: pull requests.

package githubtest

import (
	"fmt"
	"net/http"
	"strings"
)

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
	return http.StatusOK, s.sortedPage(c, list, func(is *issue) map[string]any { return s.pullJSON(is, false) })
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
