package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// CheckRun is a check run on a commit. Its name, title and summary are whoever ran the check's text.
type CheckRun struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	HeadSHA    string `json:"head_sha"`
	Status     string `json:"status"`     // queued, in_progress, completed, …
	Conclusion string `json:"conclusion"` // success, failure, timed_out, cancelled, neutral, skipped, action_required, …
	HTMLURL    string `json:"html_url"`
	DetailsURL string `json:"details_url"`
	Output     struct {
		Title   string `json:"title"`
		Summary string `json:"summary"`
		Text    string `json:"text"`
		// AnnotationsCount is how many annotations the check has (FailedChecks reads them).
		AnnotationsCount int `json:"annotations_count"`
	} `json:"output"`
	App *struct {
		Slug string `json:"slug"`
	} `json:"app"`
	CheckSuite *struct {
		ID int64 `json:"id"`
	} `json:"check_suite"`
}

// ActionsApp is the slug of the GitHub App whose check runs are GitHub Actions jobs.
const ActionsApp = "github-actions"

// IsActions says whether GitHub Actions ran the check: then it is a job, whose id is the check run's.
func (r CheckRun) IsActions() bool { return r.App != nil && r.App.Slug == ActionsApp }

// Failed says whether the check ran and failed: it completed with failure or timed out.
func (r CheckRun) Failed() bool {
	return r.Status == "completed" && (r.Conclusion == "failure" || r.Conclusion == "timed_out")
}

// CheckRuns lists every check run on commit sha (a SHA; a branch name works too).
func (c *Client) CheckRuns(ctx context.Context, sha string) ([]CheckRun, error) {
	var all []CheckRun
	u := c.repoPath("commits", sha, "check-runs") + "?per_page=100"
	for u != "" {
		var page struct {
			TotalCount int        `json:"total_count"`
			CheckRuns  []CheckRun `json:"check_runs"`
		}
		h, err := c.do(ctx, http.MethodGet, u, nil, &page)
		if err != nil {
			return nil, err
		}
		all = append(all, page.CheckRuns...)
		u = nextLink(h.Get("Link"))
	}
	return all, nil
}

// FailingCheckRuns lists the check runs on commit sha that completed with a failure (or timed out), each
// with its output's title and summary.
func (c *Client) FailingCheckRuns(ctx context.Context, sha string) ([]CheckRun, error) {
	all, err := c.CheckRuns(ctx, sha)
	if err != nil {
		return nil, err
	}
	var failed []CheckRun
	for _, r := range all {
		if r.Failed() {
			failed = append(failed, r)
		}
	}
	return failed, nil
}

// Job is a GitHub Actions job.
type Job struct {
	ID         int64     `json:"id"`
	RunID      int64     `json:"run_id"`
	Name       string    `json:"name"`
	Status     string    `json:"status"`
	Conclusion string    `json:"conclusion"`
	HTMLURL    string    `json:"html_url"`
	Steps      []JobStep `json:"steps"`
}

// JobStep is one step of a job.
type JobStep struct {
	Number     int    `json:"number"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
}

// FailedStep is the first step that failed, or "" when the job names none.
func (j Job) FailedStep() string {
	for _, s := range j.Steps {
		if s.Conclusion == "failure" || s.Conclusion == "timed_out" {
			return s.Name
		}
	}
	return ""
}

// CheckRunJob finds the GitHub Actions job behind a check run: on GitHub a job's id is its check run's.
// ok is false for a check that no Actions job ran (another CI's), which has no log to fetch.
func (c *Client) CheckRunJob(ctx context.Context, r CheckRun) (job Job, ok bool, err error) {
	if !r.IsActions() {
		return Job{}, false, nil
	}
	_, err = c.do(ctx, http.MethodGet, c.repoPath("actions", "jobs", strconv.FormatInt(r.ID, 10)), nil, &job)
	if errors.Is(err, ErrNotFound) {
		return Job{}, false, nil
	}
	if err != nil {
		return Job{}, false, fmt.Errorf("the job of check %d: %w", r.ID, err)
	}
	return job, true, nil
}

// RunJobs lists the jobs of Actions run id (its latest attempt).
func (c *Client) RunJobs(ctx context.Context, runID int64) ([]Job, error) {
	var all []Job
	u := c.repoPath("actions", "runs", strconv.FormatInt(runID, 10), "jobs") + "?per_page=100"
	for u != "" {
		var page struct {
			Jobs []Job `json:"jobs"`
		}
		h, err := c.do(ctx, http.MethodGet, u, nil, &page)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Jobs...)
		u = nextLink(h.Get("Link"))
	}
	return all, nil
}

// MaxCheckLogs bounds how many failed jobs' logs FailedChecks reads for one commit.
const MaxCheckLogs = 5

// FailedCheck is a check that failed on a commit, with what explains it. All of it but the ids is text
// the check's author (a CI service, a workflow, the code it ran) wrote: data, escaped wherever rendered.
type FailedCheck struct {
	Run CheckRun
	Job *Job    // the Actions job behind the check; nil for another CI's check
	Log LogTail // the tail of the job's failing step; empty without a job, or when LogErr says why
	// Annotations are another CI's annotations of the check (at most MaxAnnotations): where it failed.
	Annotations []Annotation
	// LogErr is why the job's log could not be read (it expired, the token may not read actions, more than
	// MaxCheckLogs jobs failed); the check's summary still explains what it can.
	LogErr error
}

// PullChecks names the pull request whose checks are read: its number and its head branch, in this
// repository.
type PullChecks struct {
	Number int
	Branch string
}

// CheckSuite is a check suite as the fix round reads it: whose pull request and branch it ran for.
type CheckSuite struct {
	ID           int64  `json:"id"`
	HeadBranch   string `json:"head_branch"`
	PullRequests []struct {
		Number int `json:"number"`
		Head   struct {
			Ref  string `json:"ref"`
			Repo struct {
				ID int64 `json:"id"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			Repo struct {
				ID int64 `json:"id"`
			} `json:"repo"`
		} `json:"base"`
	} `json:"pull_requests"`
}

// startedFor says whether the suite ran for pull request pr: on its head branch, listing it, from this
// repository (its head repository is its base's). A fork's pull request whose head is the same commit
// has suites of its own, which say none of that.
func (s CheckSuite) startedFor(pr PullChecks) bool {
	if pr.Number == 0 || s.HeadBranch != pr.Branch {
		return false
	}
	for _, p := range s.PullRequests {
		if p.Number == pr.Number && p.Head.Ref == pr.Branch && p.Head.Repo.ID != 0 && p.Head.Repo.ID == p.Base.Repo.ID {
			return true
		}
	}
	return false
}

// CheckSuites lists the check suites on commit sha.
func (c *Client) CheckSuites(ctx context.Context, sha string) ([]CheckSuite, error) {
	var all []CheckSuite
	u := c.repoPath("commits", sha, "check-suites") + "?per_page=100"
	for u != "" {
		var page struct {
			CheckSuites []CheckSuite `json:"check_suites"`
		}
		h, err := c.do(ctx, http.MethodGet, u, nil, &page)
		if err != nil {
			return nil, err
		}
		all = append(all, page.CheckSuites...)
		u = nextLink(h.Get("Link"))
	}
	return all, nil
}

// Annotation is one annotation of a check run: a file, a line and a message.
type Annotation struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	Level     string `json:"annotation_level"`
	Title     string `json:"title"`
	Message   string `json:"message"`
}

// MaxAnnotations bounds the annotations FailedChecks reads of one check (one page).
const MaxAnnotations = 20

// CheckRunAnnotations lists the first MaxAnnotations annotations of check run id.
func (c *Client) CheckRunAnnotations(ctx context.Context, id int64) ([]Annotation, error) {
	var out []Annotation
	_, err := c.do(ctx, http.MethodGet, c.repoPath("check-runs", strconv.FormatInt(id, 10), "annotations")+"?per_page="+strconv.Itoa(MaxAnnotations), nil, &out)
	if len(out) > MaxAnnotations {
		out = out[:MaxAnnotations]
	}
	return out, err
}

// FailedChecks lists the checks that failed on commit sha for pull request pr (of suites that ran for it:
// nothing a fork's pull request on the same commit made), each with its Actions job and the tail of that
// job's failing step (opts bounds it; TailOptions.Step is filled in from the job's steps). Logs are read
// one after another, each in bounded memory, at most MaxCheckLogs of them.
func (c *Client) FailedChecks(ctx context.Context, sha string, pr PullChecks, opts TailOptions) ([]FailedCheck, error) {
	suites, err := c.CheckSuites(ctx, sha)
	if err != nil {
		return nil, err
	}
	own := map[int64]bool{}
	for _, s := range suites {
		if s.startedFor(pr) {
			own[s.ID] = true
		}
	}
	failing, err := c.FailingCheckRuns(ctx, sha)
	if err != nil {
		return nil, err
	}
	var runs []CheckRun
	for _, r := range failing {
		if r.CheckSuite != nil && own[r.CheckSuite.ID] {
			runs = append(runs, r)
		}
	}
	out := make([]FailedCheck, 0, len(runs))
	logs := 0
	for _, r := range runs {
		fc := FailedCheck{Run: r}
		job, ok, err := c.CheckRunJob(ctx, r)
		if !ok && err == nil && r.Output.AnnotationsCount > 0 {
			// Another CI's check says where it failed in its annotations.
			if fc.Annotations, err = c.CheckRunAnnotations(ctx, r.ID); err != nil {
				fc.LogErr, err = fmt.Errorf("the annotations of check %d: %w", r.ID, err), nil
			}
		}
		switch {
		case err != nil:
			fc.LogErr = err
		case ok && logs >= MaxCheckLogs:
			fc.Job = &job
			fc.LogErr = fmt.Errorf("more than %d jobs failed; this one's log was not read", MaxCheckLogs)
		case ok:
			fc.Job = &job
			logs++
			o := opts
			if o.Step == "" {
				o.Step = job.FailedStep()
			}
			fc.Log, fc.LogErr = c.JobLog(ctx, job.ID, o)
		}
		out = append(out, fc)
	}
	return out, nil
}
