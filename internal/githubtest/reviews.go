package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Pull request reviews, review comments (in threads), review requests: the REST operations ralph uses and,
// through GraphQL (PullRequest.reviewThreads), the threads with their comments in order.

type review struct {
	id        int64
	pull      int
	user      string
	body      string
	state     string // APPROVED, CHANGES_REQUESTED, COMMENTED
	commit    string
	submitted time.Time
}

type reviewThread struct {
	id       int64
	pull     int
	path     string
	line     int
	diffHunk string
	resolved bool
	comments []*reviewComment // in order; the first is the one replies answer
}

type reviewComment struct {
	id               int64
	thread           *reviewThread
	review           int64
	user, body       string
	commit           string
	inReplyTo        int64
	created, updated time.Time
}

// Review is a pull request review as the server holds it.
type Review struct {
	ID                int64
	User, Body, State string // State: APPROVED, CHANGES_REQUESTED or COMMENTED
}

// ThreadComment is one comment of a review thread a test adds.
type ThreadComment struct {
	User, Body string
}

// ReviewComment is a review comment as the server holds it.
type ReviewComment struct {
	ID         int64
	ThreadID   string // the thread's GraphQL id
	User, Body string
	Path       string
	Line       int
	InReplyTo  int64 // the thread's first comment, for a reply; 0 for the first
}

// AddReview submits a review of pull request pr as user, as on the web: state is "APPROVED",
// "CHANGES_REQUESTED" or "COMMENTED". It returns the review's id.
func (s *Server) AddReview(pr int, user, state, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch state {
	case "APPROVED", "CHANGES_REQUESTED", "COMMENTED":
	default:
		s.t.Errorf("githubtest: unknown review state %q", state)
		return 0
	}
	is := s.lookupIssue(pr)
	if is == nil || is.pull == nil {
		s.t.Errorf("githubtest: #%d is not a pull request", pr)
		return 0
	}
	return s.addReview(is, user, state, body).id
}

func (s *Server) addReview(is *issue, user, state, body string) *review {
	s.knowUser(user)
	r := &review{id: s.newID(), pull: is.number, user: user, body: body, state: state, commit: s.headSHA(is), submitted: s.now()}
	s.reviews = append(s.reviews, r)
	// A review answers a request for review: GitHub removes the reviewer from the requested ones.
	is.pull.requested = slices.DeleteFunc(is.pull.requested, func(l string) bool { return strings.EqualFold(l, user) })
	is.updated = r.submitted
	return r
}

// AddReviewThread starts a review thread on pull request pr at path and line (the diff hunk as GitHub shows
// it above the comment) with comments in order, the first one starting the thread and each other one a
// reply, as people write them on the web. It returns the thread's GraphQL id and the comments' ids.
func (s *Server) AddReviewThread(pr int, path string, line int, diffHunk string, comments ...ThreadComment) (string, []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.lookupIssue(pr)
	if is == nil || is.pull == nil || len(comments) == 0 {
		s.t.Errorf("githubtest: a review thread needs a pull request (#%d) and a comment", pr)
		return "", nil
	}
	th := &reviewThread{id: s.newID(), pull: pr, path: path, line: line, diffHunk: diffHunk}
	s.threads = append(s.threads, th)
	var ids []int64
	for i, c := range comments {
		var first int64
		if i > 0 {
			first = th.comments[0].id
		}
		ids = append(ids, s.addReviewComment(is, th, c.User, c.Body, first).id)
	}
	return threadNodeID(th.id), ids
}

// ResolveThread marks a review thread resolved, as a person does on the web.
func (s *Server) ResolveThread(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, th := range s.threads {
		if threadNodeID(th.id) == id {
			th.resolved = true
			return
		}
	}
	s.t.Errorf("githubtest: no review thread %s", id)
}

func threadNodeID(id int64) string { return fmt.Sprintf("PRRT_%d", id) }

func (s *Server) addReviewComment(is *issue, th *reviewThread, user, body string, inReplyTo int64) *reviewComment {
	s.knowUser(user)
	now := s.now()
	rv := s.addReviewRecord(is, user)
	c := &reviewComment{id: s.newID(), thread: th, review: rv, user: user, body: body, commit: s.headSHA(is),
		inReplyTo: inReplyTo, created: now, updated: now}
	th.comments = append(th.comments, c)
	is.updated = now
	return c
}

// addReviewRecord is the COMMENTED review a single review comment belongs to on GitHub.
func (s *Server) addReviewRecord(is *issue, user string) int64 {
	r := &review{id: s.newID(), pull: is.number, user: user, state: "COMMENTED", commit: s.headSHA(is), submitted: s.now()}
	s.reviews = append(s.reviews, r)
	return r.id
}

// Reviews lists pull request pr's reviews in order.
func (s *Server) Reviews(pr int) []Review {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Review
	for _, r := range s.reviews {
		if r.pull == pr {
			out = append(out, Review{ID: r.id, User: r.user, Body: r.body, State: r.state})
		}
	}
	return out
}

// ReviewComments lists pull request pr's review comments, thread by thread, each thread in order.
func (s *Server) ReviewComments(pr int) []ReviewComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ReviewComment
	for _, th := range s.threads {
		if th.pull != pr {
			continue
		}
		for _, c := range th.comments {
			out = append(out, ReviewComment{ID: c.id, ThreadID: threadNodeID(th.id), User: c.user, Body: c.body,
				Path: th.path, Line: th.line, InReplyTo: c.inReplyTo})
		}
	}
	return out
}

// RequestedReviewers lists the logins whose review of pull request pr is requested and not given yet.
func (s *Server) RequestedReviewers(pr int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.lookupIssue(pr); is != nil && is.pull != nil {
		return slices.Clone(is.pull.requested)
	}
	return nil
}

func (s *Server) reviewRoutes() map[string]handler {
	h := func(fn func(c *call) (int, any), query []string, body ...string) handler {
		return handler{fn: fn, query: query, body: body}
	}
	const pull = "/repos/{owner}/{repo}/pulls/{pull_number}"
	return map[string]handler{
		"GET " + pull + "/reviews":                        h(s.listReviews, pageParams),
		"POST " + pull + "/reviews":                       h(s.createReview, nil, "body", "event", "commit_id"),
		"GET " + pull + "/comments":                       h(s.listReviewComments, pageParams),
		"POST " + pull + "/comments/{comment_id}/replies": h(s.replyReviewComment, nil, "body"),
		"POST " + pull + "/requested_reviewers":           h(s.requestReviewers, nil, "reviewers"),
		"GET " + pull + "/requested_reviewers":            h(s.listRequestedReviewers, nil),
	}
}

func (s *Server) reviewJSON(r *review) map[string]any {
	html := fmt.Sprintf("%s/pull/%d#pullrequestreview-%d", s.repoHTML(), r.pull, r.id)
	pullAPI := fmt.Sprintf("%s/pulls/%d", s.repoAPI(), r.pull)
	return map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("PRR_%d", r.id), "user": s.userJSON(r.user), "body": r.body,
		"state": r.state, "html_url": html, "pull_request_url": pullAPI, "commit_id": r.commit,
		"submitted_at": timeJSON(r.submitted), "author_association": s.association(r.user),
		"_links": map[string]any{"html": map[string]any{"href": html}, "pull_request": map[string]any{"href": pullAPI}},
	}
}

func (s *Server) listReviews(c *call) (int, any) {
	is := s.pullOr404(c)
	if is == nil {
		return notFound()
	}
	var list []*review
	for _, r := range s.reviews {
		if r.pull == is.number {
			list = append(list, r)
		}
	}
	lo, hi := c.page(len(list))
	out := []any{}
	for _, r := range list[lo:hi] {
		out = append(out, s.reviewJSON(r))
	}
	return http.StatusOK, out
}

func (s *Server) createReview(c *call) (int, any) {
	is := s.pullOr404(c)
	if is == nil {
		return notFound()
	}
	body, _ := c.str("body")
	event, _ := c.str("event")
	state := map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}[event]
	switch {
	case event == "":
		return unprocessable("githubtest: a pending review (no event) is not implemented; give event")
	case state == "":
		return unprocessable(fmt.Sprintf("Unprocessable Entity: event %q is not APPROVE, REQUEST_CHANGES or COMMENT", event))
	case state != "APPROVED" && strings.TrimSpace(body) == "":
		return unprocessable(fmt.Sprintf("Unprocessable Entity: \"Body is required when using %s\"", event))
	case state != "COMMENTED" && strings.EqualFold(is.author, s.opts.TokenLogin):
		verb := map[string]string{"APPROVED": "approve", "CHANGES_REQUESTED": "request changes on"}[state]
		return unprocessable(fmt.Sprintf("Unprocessable Entity: \"Can not %s your own pull request\"", verb))
	}
	if sha, ok := c.str("commit_id"); ok && sha != s.headSHA(is) && s.objectType(sha) != "commit" {
		return unprocessable("Unprocessable Entity: commit_id is not a commit of this pull request")
	}
	return http.StatusOK, s.reviewJSON(s.addReview(is, s.opts.TokenLogin, state, body))
}

func (s *Server) reviewCommentJSON(c *reviewComment) map[string]any {
	th := c.thread
	api := fmt.Sprintf("%s/pulls/comments/%d", s.repoAPI(), c.id)
	html := fmt.Sprintf("%s/pull/%d#discussion_r%d", s.repoHTML(), th.pull, c.id)
	pullAPI := fmt.Sprintf("%s/pulls/%d", s.repoAPI(), th.pull)
	m := map[string]any{
		"url": api, "id": c.id, "node_id": fmt.Sprintf("PRRC_%d", c.id), "pull_request_review_id": c.review,
		"diff_hunk": th.diffHunk, "path": th.path, "commit_id": c.commit, "original_commit_id": c.commit,
		"user": s.userJSON(c.user), "body": c.body, "created_at": timeJSON(c.created), "updated_at": timeJSON(c.updated),
		"html_url": html, "pull_request_url": pullAPI, "author_association": s.association(c.user),
		"line": th.line, "original_line": th.line, "side": "RIGHT", "subject_type": "line",
		"_links": map[string]any{"self": map[string]any{"href": api}, "html": map[string]any{"href": html},
			"pull_request": map[string]any{"href": pullAPI}},
	}
	if c.inReplyTo != 0 {
		m["in_reply_to_id"] = c.inReplyTo
	}
	return m
}

func (s *Server) listReviewComments(c *call) (int, any) {
	is := s.pullOr404(c)
	if is == nil {
		return notFound()
	}
	var list []*reviewComment
	for _, th := range s.threads {
		if th.pull == is.number {
			list = append(list, th.comments...)
		}
	}
	slices.SortStableFunc(list, func(a, b *reviewComment) int { return int(a.id - b.id) })
	lo, hi := c.page(len(list))
	out := []any{}
	for _, cm := range list[lo:hi] {
		out = append(out, s.reviewCommentJSON(cm))
	}
	return http.StatusOK, out
}

// replyReviewComment answers POST …/pulls/{pull_number}/comments/{comment_id}/replies: a reply joins the
// thread of the comment it answers, which must be the thread's first (GitHub: "Replies to replies are not
// supported").
func (s *Server) replyReviewComment(c *call) (int, any) {
	is := s.pullOr404(c)
	if is == nil {
		return notFound()
	}
	id, _ := strconv.ParseInt(c.params["comment_id"], 10, 64)
	var parent *reviewComment
	for _, th := range s.threads {
		for _, cm := range th.comments {
			if cm.id == id && th.pull == is.number {
				parent = cm
			}
		}
	}
	if parent == nil {
		return notFound()
	}
	if parent.inReplyTo != 0 {
		return unprocessable("Unprocessable Entity: replies to replies are not supported; reply to the thread's first comment")
	}
	body, _ := c.str("body")
	if strings.TrimSpace(body) == "" {
		return validationFailed(map[string]any{"resource": "PullRequestReviewComment", "field": "body", "code": "missing_field"})
	}
	cm := s.addReviewComment(is, parent.thread, s.opts.TokenLogin, body, parent.id)
	c.w.Header().Set("Location", fmt.Sprintf("%s/pulls/comments/%d", s.repoAPI(), cm.id))
	return http.StatusCreated, s.reviewCommentJSON(cm)
}

// requestReviewers answers POST …/requested_reviewers as GitHub does: only collaborators can be asked, and
// never the pull request's author.
func (s *Server) requestReviewers(c *call) (int, any) {
	is := s.pullOr404(c)
	if is == nil {
		return notFound()
	}
	list, _ := c.body["reviewers"].([]any)
	for _, v := range list {
		login, _ := v.(string)
		switch role := s.perms[login]; {
		case strings.EqualFold(login, is.author):
			return unprocessable("Review cannot be requested from pull request author.")
		case !strings.EqualFold(login, s.opts.Owner) && (role == "" || role == "none"):
			return unprocessable("Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the " + s.opts.Owner + "/" + s.opts.Repo + " repository.")
		}
	}
	for _, v := range list {
		login, _ := v.(string)
		if !slices.ContainsFunc(is.pull.requested, func(l string) bool { return strings.EqualFold(l, login) }) {
			is.pull.requested = append(is.pull.requested, login)
		}
	}
	is.updated = s.now()
	return http.StatusCreated, s.pullJSON(is, false)
}

func (s *Server) listRequestedReviewers(c *call) (int, any) {
	is := s.pullOr404(c)
	if is == nil {
		return notFound()
	}
	users := []any{}
	for _, l := range is.pull.requested {
		users = append(users, s.userJSON(l))
	}
	return http.StatusOK, map[string]any{"users": users, "teams": []any{}}
}

// GraphQL: PullRequest.reviewThreads and its threads and comments.

type threadObject struct {
	s  *Server
	th *reviewThread
}

func (threadObject) typeName() string { return "PullRequestReviewThread" }

func (o threadObject) resolve(x *executor, field string, args map[string]any) any {
	switch field {
	case "id":
		return threadNodeID(o.th.id)
	case "isResolved":
		return o.th.resolved
	case "isOutdated":
		return false
	case "isCollapsed":
		return o.th.resolved
	case "path":
		return o.th.path
	case "line", "originalLine":
		return o.th.line
	case "diffSide":
		return "RIGHT"
	case "subjectType":
		return "LINE"
	case "comments":
		var nodes []gqlObject
		for _, c := range o.th.comments {
			nodes = append(nodes, reviewCommentObject{o.s, c})
		}
		return connection{"PullRequestReviewCommentConnection", nodes, args}
	}
	return x.unimplemented("PullRequestReviewThread", field)
}

type reviewCommentObject struct {
	s *Server
	c *reviewComment
}

func (reviewCommentObject) typeName() string { return "PullRequestReviewComment" }

func (o reviewCommentObject) resolve(x *executor, field string, _ map[string]any) any {
	c := o.c
	switch field {
	case "id":
		return fmt.Sprintf("PRRC_%d", c.id)
	case "databaseId":
		return c.id
	case "fullDatabaseId":
		return strconv.FormatInt(c.id, 10) // a BigInt, which GitHub sends as a string
	case "body":
		return c.body
	case "diffHunk":
		return c.thread.diffHunk
	case "path":
		return c.thread.path
	case "line", "originalLine":
		return c.thread.line
	case "url":
		return fmt.Sprintf("%s/pull/%d#discussion_r%d", o.s.repoHTML(), c.thread.pull, c.id)
	case "createdAt":
		return timeJSON(c.created)
	case "updatedAt":
		return timeJSON(c.updated)
	case "author":
		return actorObject{o.s, c.user}
	case "authorAssociation":
		return o.s.association(c.user)
	case "replyTo":
		if c.inReplyTo == 0 {
			return nil
		}
		for _, p := range c.thread.comments {
			if p.id == c.inReplyTo {
				return reviewCommentObject{o.s, p}
			}
		}
		return nil
	}
	return x.unimplemented("PullRequestReviewComment", field)
}

// reviewThreads is PullRequest.reviewThreads of pull request n.
func (s *Server) reviewThreads(n int, args map[string]any) connection {
	var nodes []gqlObject
	for _, th := range s.threads {
		if th.pull == n {
			nodes = append(nodes, threadObject{s, th})
		}
	}
	return connection{"PullRequestReviewThreadConnection", nodes, args}
}
