package e2e

// What the robustness tests (robust_*_test.go) share: a driver that runs a whole flow the way GitHub and a
// sweep would, re-running a run that died; a snapshot of everything the server holds for an issue; and the
// snapshot of a clean run to compare with.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// trigger is an event that starts a run.
type trigger struct {
	event   string
	payload any
	inputs  map[string]string
}

func (e *env) labelTrigger(n int) trigger {
	return trigger{event: "issues", payload: labeledEvent(e.t, n, workflow.LabelBuild, maintainer)}
}

// driveOpts shape a driven flow.
type driveOpts struct {
	// opts gives the options of the k-th run of the flow (0: the label run), reruns not counted; every run
	// is tracked (reported to the Actions API) whatever it says.
	opts func(k int) runOpts
	// afterRun sees each run as it ends (k as for opts; rerun: how many times this run was re-run).
	afterRun func(k, rerun int, r result)
	maxRuns  int // default 30
	reruns   int // how often one run may be re-run (as a person or a sweep would); 0: never
}

// drive enrolls issue n with the ralph:build label and runs the chain of dispatches to its end, as GitHub
// would. A run that fails without dispatching the next step (it crashed, was killed, or hit an error it
// could not get past) is re-run with the same event, as GitHub's "Re-run jobs" or the next sweep would,
// once GitHub reports it completed. It returns every run, in order.
func (e *env) drive(n int, o driveOpts) []result {
	e.t.Helper()
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	return e.follow(n, []trigger{e.labelTrigger(n)}, len(e.srv.Dispatches()), o)
}

// follow runs the triggers in queue, then the dispatches from the seen-th on, and those they make in turn,
// as drive does.
func (e *env) follow(n int, queue []trigger, seen int, o driveOpts) []result {
	e.t.Helper()
	if o.maxRuns == 0 {
		o.maxRuns = 30
	}
	var out []result
	for k, rerun := 0, 0; ; {
		if len(queue) == 0 {
			ds := e.srv.Dispatches()
			if seen >= len(ds) {
				return out
			}
			queue = append(queue, e.dispatched(ds[seen]))
			seen++
		}
		tr := queue[0]
		ro := runOpts{}
		if o.opts != nil && rerun == 0 {
			ro = o.opts(k)
		}
		ro.track = true
		r := e.start(tr.event, tr.payload, tr.inputs, ro).wait()
		out = append(out, r)
		if len(out) > o.maxRuns {
			e.t.Fatalf("the flow did not end after %d runs", o.maxRuns)
		}
		if o.afterRun != nil {
			o.afterRun(k, rerun, r)
		}
		ds := e.srv.Dispatches()
		next := ds[seen:]
		for _, d := range onePending(next) {
			queue = append(queue, e.dispatched(d))
		}
		seen = len(ds)
		if r.exit != 0 && len(next) == 0 {
			if r.exit != -1 {
				// A failure no test injected is worth seeing when a comparison later fails.
				e.t.Logf("run %d (rerun %d) exited %d:\n%s%s", k, rerun, r.exit, r.stdout, r.stderr)
			}
			if rerun++; rerun > o.reruns {
				e.t.Fatalf("run %d failed %d times in a row:\n%s%s", k, rerun, r.stdout, r.stderr)
			}
			if r.exit == -1 {
				// Killed: GitHub reports the run completed once its runner is gone.
				e.srv.SetWorkflowRun(r.runID, "completed", "cancelled")
			}
			continue
		}
		if r.exit == 0 {
			e.invariants(n)
		}
		queue, k, rerun = queue[1:], k+1, 0
	}
}

// onePending is what GitHub keeps of the dispatches one run made: the run holds its issue's concurrency group
// (ralph-<issue>), where a newer pending run replaces an older one, so of two dispatches for the same issue
// (a dispatch repeated after an unknown outcome) one run starts.
func onePending(ds []githubtest.Dispatch) []githubtest.Dispatch {
	var out []githubtest.Dispatch
	at := map[any]int{}
	for _, d := range ds {
		if i, ok := at[d.Inputs["issue"]]; ok {
			out[i] = d
			continue
		}
		at[d.Inputs["issue"]] = len(out)
		out = append(out, d)
	}
	return out
}

// dispatched is the trigger of a workflow_dispatch ralph requested.
func (e *env) dispatched(d githubtest.Dispatch) trigger {
	e.t.Helper()
	if d.Workflow != "ralph.yml" || d.Ref != "main" {
		e.t.Fatalf("dispatch of %q on %q, want ralph.yml on main", d.Workflow, d.Ref)
	}
	return trigger{event: "workflow_dispatch", payload: dispatchEvent(e.t, d.Inputs)}
}

// snapshot is what the server holds for one issue at the end of a flow, with what differs between any two
// runs (comment ids, commit SHAs, times) left out.
type snapshot struct {
	State     workflow.State
	Labels    []string
	Kinds     map[string]int    // comments by kind (see commentKind)
	Artifacts map[string]string // artifact comments by kind: their bodies
	Subjects  []string          // commit subjects on the issue's branch, newest first
	Files     []string          // "path blob" of each file on the branch
	Pulls     []string          // each pull request: title, head, base, state, draft, body
	Locks     []string          // refs under refs/ralph/locks/
}

var (
	commentIDs = regexp.MustCompile(`issuecomment-\d+`)
	shortSHAs  = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
)

// normalize takes out of s what differs between two servers and two runs: the server's address, comment
// ids and commit SHAs.
func (e *env) normalize(s string) string {
	s = strings.ReplaceAll(s, e.srv.ServerURL, "SERVER")
	return shortSHAs.ReplaceAllString(commentIDs.ReplaceAllString(s, "issuecomment-ID"), "SHA")
}

// commentKind names what a comment is: the status comment, an artifact (by its header), a notice, or
// another comment.
func commentKind(body string) string {
	switch {
	case strings.HasPrefix(body, "<!-- ralph:status -->"):
		return "status"
	case strings.Contains(body, "<!-- ralph:artifact "):
		header, _, _ := strings.Cut(body, "\n")
		return header
	case strings.Contains(body, "<!-- ralph:notice "), strings.HasPrefix(body, "### ralph"):
		return "notice"
	}
	return "other"
}

func (e *env) snapshot(n int, branch string) snapshot {
	e.t.Helper()
	s := snapshot{State: e.state(n), Labels: e.srv.Labels(n), Kinds: map[string]int{}, Artifacts: map[string]string{}}
	for _, c := range e.srv.Comments(n) {
		k := commentKind(c.Body)
		s.Kinds[k]++
		if strings.HasPrefix(k, "## ") {
			s.Artifacts[k] = e.normalize(c.Body)
		}
	}
	s.Subjects, _ = e.branch(branch)
	for _, l := range strings.Split(e.git(e.srv.BareRepo, "ls-tree", "-r", "refs/heads/"+branch), "\n") {
		// "<mode> blob <sha>\t<path>"
		f := strings.Fields(l)
		s.Files = append(s.Files, f[len(f)-1]+" "+f[2])
	}
	for _, p := range e.srv.Pulls() {
		s.Pulls = append(s.Pulls, fmt.Sprintf("%s | %s → %s | %s | draft %v\n%s", p.Title, p.Head, p.Base, p.State, p.Draft, e.normalize(p.Body)))
	}
	s.Locks = e.lockRefs()
	return s
}

// lockRefs lists the lock refs the server holds.
func (e *env) lockRefs() []string {
	out := e.git(e.srv.BareRepo, "for-each-ref", "--format=%(refname)", "refs/ralph/locks/")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// compare reports how got differs from the clean run's snapshot, and counts the duplicates (comments,
// commits, pull requests that the clean run does not have) and the losses (what it has that got lacks).
func compare(clean, got snapshot) (diff string, dups, lost int) {
	kinds := map[string]bool{}
	for k := range clean.Kinds {
		kinds[k] = true
	}
	for k := range got.Kinds {
		kinds[k] = true
	}
	for k := range kinds {
		d := got.Kinds[k] - clean.Kinds[k]
		if d > 0 {
			dups += d
		} else {
			lost -= d
		}
	}
	count := func(list []string) map[string]int {
		m := map[string]int{}
		for _, s := range list {
			m[s]++
		}
		return m
	}
	cs, gs := count(clean.Subjects), count(got.Subjects)
	for s, c := range gs {
		dups += max(0, c-cs[s])
	}
	for s, c := range cs {
		lost += max(0, c-gs[s])
	}
	if d := len(got.Pulls) - len(clean.Pulls); d > 0 {
		dups += d
	} else {
		lost -= d
	}
	return cmp.Diff(clean, got), dups, lost
}

// cleanRun is a flow with no fault, to compare with.
type cleanRun struct {
	snap        snapshot
	invocations []string
	runs        int
	dispatches  int
}

var (
	cleanMu   sync.Mutex
	cleanRuns = map[string]*cleanOnce{}
)

type cleanOnce struct {
	once sync.Once
	run  *cleanRun
}

// clean runs the flow of issue #1 "Add a greeting" with this config and these control files once per test
// binary, with no fault, and returns what the server held at its end.
func clean(t *testing.T, configYAML string, controls map[string]string) cleanRun {
	t.Helper()
	keys := make([]string, 0, len(controls))
	for k := range controls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	key := configYAML
	for _, k := range keys {
		key += "\x00" + k + "=" + controls[k]
	}
	cleanMu.Lock()
	c := cleanRuns[key]
	if c == nil {
		c = &cleanOnce{}
		cleanRuns[key] = c
	}
	cleanMu.Unlock()
	c.once.Do(func() {
		e := newEnv(t, configYAML)
		for k, v := range controls {
			e.setControl(k, v)
		}
		n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
		runs := e.drive(n, driveOpts{afterRun: func(k, rerun int, r result) {
			if r.exit != 0 {
				t.Fatalf("clean run %d: exit %d\n%s%s", k, r.exit, r.stdout, r.stderr)
			}
		}})
		c.run = &cleanRun{snap: e.snapshot(n, branch), invocations: e.invocations(), runs: len(runs), dispatches: len(e.srv.Dispatches())}
	})
	if c.run == nil {
		t.Fatal("the clean run to compare with failed")
	}
	return *c.run
}

// waitInvocations waits until the agent has been invoked n times.
func (e *env) waitInvocations(n int) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(e.invocations()) < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("the agent was invoked %d times after 30s, want %d", len(e.invocations()), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killAgent kills the process group of the agent that last started, as a runner that dies takes its
// processes with it.
func (e *env) killAgent() {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.control, "agent.pid"))
	if err != nil {
		e.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		e.t.Fatal(err)
	}
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		return // gone already
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// withRepeat is list with its i-th element repeated once (a step whose agent legitimately ran twice).
func withRepeat(list []string, i int) []string {
	out := slices.Clone(list[:i+1])
	return append(out, list[i:]...)
}

// record reads the hidden record of the issue's one status comment.
func (e *env) record(n int) record.Record {
	e.t.Helper()
	rec, ok, err := record.Parse(e.statusComment(n))
	if err != nil || !ok {
		e.t.Fatalf("the status comment's record: ok %v, %v", ok, err)
	}
	return rec
}

// soak reports whether the long runs were asked for (RALPH_E2E_SOAK=1, as .ci/run sets): more faults, more
// rounds. Without it the same tests run shorter, so that `go test ./...` stays within go test's default
// timeout on a small, busy machine.
func soak() bool { return os.Getenv("RALPH_E2E_SOAK") != "" }
