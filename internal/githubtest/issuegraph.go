package githubtest

import (
	"fmt"
	"net/http"
	"slices"
)

// issueGraph holds sub-issues and blocked-by dependencies between issues, by issue number.
type issueGraph struct {
	parent    map[int]int   // child → parent
	children  map[int][]int // parent → children, in the order added
	blockedBy map[int][]int // issue → the issues that block it
}

func (g *issueGraph) init() {
	if g.parent == nil {
		g.parent, g.children, g.blockedBy = map[int]int{}, map[int][]int{}, map[int][]int{}
	}
}

func (s *Server) graphRoutes() map[string]handler {
	h := func(fn func(c *call) (int, any), query []string, body ...string) handler {
		return handler{fn: fn, query: query, body: body}
	}
	const issue = "/repos/{owner}/{repo}/issues/{issue_number}"
	return map[string]handler{
		"GET " + issue + "/sub_issues":               h(s.listSubIssues, pageParams),
		"POST " + issue + "/sub_issues":              h(s.addSubIssue, nil, "sub_issue_id", "replace_parent"),
		"GET " + issue + "/dependencies/blocked_by":  h(s.listBlockedBy, pageParams),
		"POST " + issue + "/dependencies/blocked_by": h(s.addBlockedBy, nil, "issue_id"),
	}
}

func (s *Server) issueByID(id int64) *issue {
	for _, is := range s.issues {
		if is.id == id {
			return is
		}
	}
	return nil
}

func (s *Server) issueList(c *call, numbers []int) (int, any) {
	lo, hi := c.page(len(numbers))
	out := []any{}
	for _, n := range numbers[lo:hi] {
		out = append(out, s.issueJSON(s.issues[n]))
	}
	return http.StatusOK, out
}

func (s *Server) listSubIssues(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	s.graph.init()
	return s.issueList(c, s.graph.children[is.number])
}

func (s *Server) addSubIssue(c *call) (int, any) {
	parent := s.issueOr404(c)
	if parent == nil {
		return notFound()
	}
	id, ok := c.body["sub_issue_id"].(float64)
	child := s.issueByID(int64(id))
	if !ok || child == nil {
		return validationFailed(map[string]any{"resource": "Issue", "field": "sub_issue_id", "code": "invalid",
			"message": fmt.Sprintf("sub_issue_id %v is not the id of an issue of this repository (it takes the issue's id, not its number)", c.body["sub_issue_id"])})
	}
	if child == parent || child.pull != nil {
		return unprocessable("An issue cannot be a sub-issue of itself, and a pull request cannot be a sub-issue")
	}
	s.graph.init()
	if p, has := s.graph.parent[child.number]; has {
		if p == parent.number {
			return unprocessable("Sub-issue is already a sub-issue of this issue")
		}
		if !c.boolean("replace_parent") {
			return unprocessable("Sub-issue already has a parent issue")
		}
		s.graph.children[p] = slices.DeleteFunc(s.graph.children[p], func(n int) bool { return n == child.number })
	}
	s.graph.parent[child.number] = parent.number
	s.graph.children[parent.number] = append(s.graph.children[parent.number], child.number)
	return http.StatusCreated, s.issueJSON(parent)
}

func (s *Server) listBlockedBy(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	s.graph.init()
	return s.issueList(c, s.graph.blockedBy[is.number])
}

func (s *Server) addBlockedBy(c *call) (int, any) {
	is := s.issueOr404(c)
	if is == nil {
		return notFound()
	}
	id, ok := c.body["issue_id"].(float64)
	blocker := s.issueByID(int64(id))
	if !ok || blocker == nil || blocker == is {
		return validationFailed(map[string]any{"resource": "IssueDependency", "field": "issue_id", "code": "invalid",
			"message": fmt.Sprintf("issue_id %v is not the id of another issue of this repository (it takes the issue's id, not its number)", c.body["issue_id"])})
	}
	s.graph.init()
	if slices.Contains(s.graph.blockedBy[is.number], blocker.number) {
		return unprocessable("Issue dependency already exists")
	}
	s.graph.blockedBy[is.number] = append(s.graph.blockedBy[is.number], blocker.number)
	return http.StatusCreated, s.issueJSON(blocker)
}

// dependencies is an issue's issue_dependencies_summary: blocked_by and blocking count the open issues.
func (s *Server) dependencies(n int) map[string]any {
	s.graph.init()
	open := func(numbers []int) int {
		k := 0
		for _, m := range numbers {
			if is := s.issues[m]; is != nil && is.state == "open" {
				k++
			}
		}
		return k
	}
	var blocking []int
	for m, blockers := range s.graph.blockedBy {
		if slices.Contains(blockers, n) {
			blocking = append(blocking, m)
		}
	}
	return map[string]any{"blocked_by": open(s.graph.blockedBy[n]), "total_blocked_by": len(s.graph.blockedBy[n]),
		"blocking": open(blocking), "total_blocking": len(blocking)}
}

// SubIssues lists the numbers of issue n's sub-issues.
func (s *Server) SubIssues(n int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.graph.init()
	return slices.Clone(s.graph.children[n])
}

// BlockedBy lists the numbers of the issues that block issue n.
func (s *Server) BlockedBy(n int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.graph.init()
	return slices.Clone(s.graph.blockedBy[n])
}

// AddBlockedBy records, as a person would, that issue n is blocked by issue blocker.
func (s *Server) AddBlockedBy(n, blocker int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.graph.init()
	s.graph.blockedBy[n] = append(s.graph.blockedBy[n], blocker)
}

// CloseIssue closes issue n as completed, as a person would.
func (s *Server) CloseIssue(n int) { s.CloseIssueAs(n, "completed") }

// CloseIssueAs closes issue n with a state_reason of a closed issue's (completed, not_planned or
// duplicate), as a person would.
func (s *Server) CloseIssueAs(n int, reason string) {
	if !slices.Contains([]string{"completed", "not_planned", "duplicate"}, reason) {
		s.t.Errorf("githubtest: %q is not the state_reason of a closed issue", reason)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.issues[n]; is != nil {
		is.state, is.stateReason, is.closed, is.updated = "closed", reason, s.now(), s.now()
	}
}
