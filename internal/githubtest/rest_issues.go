// The test server's REST handlers: issues.

package githubtest

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

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
	return http.StatusOK, s.sortedPage(c, list, s.issueJSON)
}

// sortedPage is the page of list (issues or pull requests) the call asks for, sorted as it asks, each
// rendered by render.
func (s *Server) sortedPage(c *call, list []*issue, render func(*issue) map[string]any) []any {
	sortIssues(list, c.query.Get("sort"), c.query.Get("direction"), s.commentCount)
	lo, hi := c.page(len(list))
	out := []any{}
	for _, is := range list[lo:hi] {
		out = append(out, render(is))
	}
	return out
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
