// The test server's REST handlers: comments.

package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

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
