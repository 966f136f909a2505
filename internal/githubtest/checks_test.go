package githubtest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChecksJobsAndLogs(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{})
	s.CreateIssue("alice", "feature", "")
	openPull(t, s, "ralph/1-feature")
	sha := s.branchSHA("ralph/1-feature")
	log := "2024-01-01T00:00:00.0000000Z ##[group]Run go test ./...\nFAIL\n##[error]Process completed with exit code 1.\n"
	failing := s.SetCheckRun(sha, CheckRun{Name: "test", Conclusion: "failure", Title: "1 test failed", Summary: "TestX failed",
		Steps: []Step{{"Set up job", "success"}, {"Run go test ./...", "failure"}}, Log: log})
	s.SetCheckRun(sha, CheckRun{Name: "lint", Conclusion: "success"})
	external := s.SetCheckRun(sha, CheckRun{Name: "ci/circleci", App: "circleci", Conclusion: "failure", Summary: "see CircleCI"})

	type ghCheckRun struct {
		ID         int64
		Name       string
		Conclusion string
		Output     struct{ Title, Summary string }
		App        struct{ Slug string }
	}
	runs := decode[struct {
		TotalCount int          `json:"total_count"`
		CheckRuns  []ghCheckRun `json:"check_runs"`
	}](t, do(t, s, "GET", "/repos/octo/demo/commits/"+sha+"/check-runs?per_page=100", nil))
	if runs.TotalCount != 3 || runs.CheckRuns[0].ID != failing || runs.CheckRuns[0].Output.Title != "1 test failed" ||
		runs.CheckRuns[0].Output.Summary != "TestX failed" || runs.CheckRuns[0].App.Slug != ActionsApp || runs.CheckRuns[2].App.Slug != "circleci" {
		t.Errorf("check runs = %+v", runs)
	}
	byBranch := decode[struct {
		TotalCount int `json:"total_count"`
	}](t, do(t, s, "GET", "/repos/octo/demo/commits/ralph/1-feature/check-runs?check_name=test", nil))
	if byBranch.TotalCount != 1 {
		t.Errorf("check runs named test on the branch: %d, want 1", byBranch.TotalCount)
	}
	suites := decode[struct {
		CheckSuites []struct {
			Conclusion   string
			HeadBranch   string                 `json:"head_branch"`
			PullRequests []struct{ Number int } `json:"pull_requests"`
		} `json:"check_suites"`
	}](t, do(t, s, "GET", "/repos/octo/demo/commits/"+sha+"/check-suites", nil))
	if len(suites.CheckSuites) != 2 || suites.CheckSuites[0].Conclusion != "failure" || suites.CheckSuites[0].HeadBranch != "ralph/1-feature" ||
		len(suites.CheckSuites[0].PullRequests) != 1 {
		t.Errorf("check suites = %+v", suites)
	}

	run := s.WorkflowRunID(failing)
	jobs := decode[struct {
		Jobs []struct {
			ID    int64
			Name  string
			Steps []struct {
				Name, Conclusion string
				Number           int
			}
		}
	}](t, do(t, s, "GET", fmt.Sprintf("/repos/octo/demo/actions/runs/%d/jobs", run), nil))
	if len(jobs.Jobs) != 2 || jobs.Jobs[0].ID != failing || len(jobs.Jobs[0].Steps) != 2 || jobs.Jobs[0].Steps[1].Conclusion != "failure" {
		t.Errorf("jobs = %+v", jobs)
	}
	want(t, do(t, s, "GET", fmt.Sprintf("/repos/octo/demo/actions/jobs/%d", failing), nil), 200)
	want(t, do(t, s, "GET", fmt.Sprintf("/repos/octo/demo/actions/jobs/%d", external), nil), 404) // not an Actions job

	// The log: 302 to a signed URL that refuses the API token.
	noFollow := &http.Client{Transport: s.Client().Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u, auth string) (int, string, http.Header) {
		req, _ := http.NewRequest("GET", u, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	status, _, h := get(fmt.Sprintf("%s/repos/octo/demo/actions/jobs/%d/logs", s.URL, failing), "token test-token")
	loc := h.Get("Location")
	if status != http.StatusFound || !strings.HasPrefix(loc, s.ServerURL+logsPath) {
		t.Fatalf("logs: status %d, Location %q; want 302 to the download URL", status, loc)
	}
	tests := []struct {
		name, url, auth string
		status          int
		body            string
	}{
		{"the signed URL", loc, "", 200, log},
		{"with the API token", loc, "token test-token", 400, ""},
		{"a forged signature", strings.Replace(loc, "sig=", "sig=00", 1), "", 403, ""},
	}
	for _, tt := range tests {
		status, body, _ := get(tt.url, tt.auth)
		if status != tt.status || (tt.body != "" && body != tt.body) {
			t.Errorf("%s: status %d %q, want %d %q", tt.name, status, body, tt.status, tt.body)
		}
	}
	if status, _, _ := get(fmt.Sprintf("%s/repos/octo/demo/actions/jobs/%d/logs", s.URL, external), "token test-token"); status != 404 {
		t.Errorf("logs of a check no Actions job ran: status %d, want 404", status)
	}
}

func TestCheckRunUpdatesByName(t *testing.T) {
	t.Parallel()
	s := New(t, Options{})
	sha := s.branchSHA("main")
	id := s.SetCheckRun(sha, CheckRun{Name: "test", Status: "in_progress"})
	if again := s.SetCheckRun(sha, CheckRun{Name: "test", Conclusion: "failure"}); again != id {
		t.Errorf("the second SetCheckRun made check run %d, want %d updated", again, id)
	}
	runs := decode[struct {
		CheckRuns []struct{ Status, Conclusion string } `json:"check_runs"`
	}](t, do(t, s, "GET", "/repos/octo/demo/commits/"+sha+"/check-runs", nil))
	if diff := cmp.Diff([]struct{ Status, Conclusion string }{{"completed", "failure"}}, runs.CheckRuns); diff != "" {
		t.Errorf("check runs (-want +got):\n%s", diff)
	}
}
