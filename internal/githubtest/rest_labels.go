// The test server's REST handlers: labels.

package githubtest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
)

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
