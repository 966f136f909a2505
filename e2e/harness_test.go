// Package e2e drives the built gh-ralph binary the way GitHub Actions does — environment variables, an
// event file, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY, a workspace cloned from a bare origin — against the
// GitHub test server, with a scripted agent.
package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

var binary string

// modelcall is the agent's stand-in for a model client (testdata/modelcall), built next to the binary.
var modelcall string

// peakrss runs ralph for the runs that measure its memory (env.peak; testdata/peakrss).
var peakrss string

func TestMain(m *testing.M) {
	flag.Parse()
	widenParallel()
	dir, err := os.MkdirTemp("", "ralph-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "gh-ralph")
	modelcall = filepath.Join(dir, "modelcall")
	peakrss = filepath.Join(dir, "peakrss")
	for _, b := range [][2]string{{binary, "../cmd/gh-ralph"}, {modelcall, "./testdata/modelcall"}, {peakrss, "./testdata/peakrss"}} {
		build := exec.Command("go", "build", "-o", b[0], b[1])
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", b[1]+":", err)
			os.Exit(1)
		}
	}
	// The agent runs as a user of its own when ralph is root: it must be able to run modelcall.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The binary runs on the machine's own network: it must not install its firewall rule there. The
	// tests of the rule run it in a network namespace of their own (hostile_fw_test.go).
	os.Setenv(sandbox.EnvFirewall, "off")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// widenParallel runs more of the package's parallel tests at once than the machine has cores, unless
// -parallel was given: each test spends most of its time waiting (on the processes it starts, on ralph's waits
// between retries, on the test server's retry-after), so with go test's default of one test per core the cores
// sit idle while every running test waits.
func widenParallel() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(4, 3*runtime.GOMAXPROCS(0))))
	}
}

const maintainer = "mona"

// env is one repository on the test server, with the scripted agent and a place for its control files.
type env struct {
	t       testing.TB
	srv     *githubtest.Server
	home    string
	control string
	extra   map[string]string // more variables for every run
	runs    atomic.Int64
	seen    int // dispatches already run
	// cred is the user ralph runs as (runAs); nil: the test process's. base holds what that user owns,
	// tmp is its TMPDIR.
	cred      *syscall.Credential
	base, tmp string
	// peak starts ralph's runs through peakrss, so that their result's maxRSS is ralph's own peak (the
	// test binary's wait would report the test binary's size at the exec if it is larger). Such a run
	// cannot be killed as a runner dies: kill would end peakrss, not ralph.
	peak bool
}

// agentCommand runs the scripted agent. Its control directory reaches it through agent.env (agentEnvYAML):
// the agent's environment is an allowlist, so nothing else of the test's reaches it.
func agentCommand(t testing.TB) string {
	return "sh " + agentScript(t)
}

// agentEnvYAML, under agent:, passes the control directory through to the scripted agent.
const agentEnvYAML = "  env:\n    RALPH_TEST_CONTROL: \"\"\n"

// agentReadable is RALPH_AGENT_READABLE for the scripted agent: its own directory and modelcall's, which
// Landlock keeps it from reading otherwise.
func agentReadable(t testing.TB) string {
	return testdataDir(t) + string(filepath.ListSeparator) + filepath.Dir(modelcall)
}

func agentScript(t testing.TB) string {
	p, err := filepath.Abs("testdata/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// controlDir makes a directory for the scripted agent's control files, one per env. The agent may write
// there (RALPH_AGENT_WRITABLE), and when ralph runs as root the agent's own user can reach it.
func controlDir(t testing.TB) string {
	// Not under the test's own temporary directory: ralph closes the directories around the runner's
	// files to the agent, and the test's temporary directory holds them.
	d, err := os.MkdirTemp("", "ralph-control-")
	if err != nil {
		t.Fatal(err)
	}
	// Every user may make files here but not list them: at the end of its step, another test's ralph
	// removes what its agent's uid owns in every directory anyone may write and list (sandbox's
	// removeFiles), and agents' uids are drawn again for every run, so a later agent that drew the uid this
	// test's agent had would otherwise take this test's files with its own.
	if err := os.Chmod(d, 0o733); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// newEnv makes a repository whose default branch holds the given .github/ralph.yml.
func newEnv(t testing.TB, configYAML string) *env {
	t.Helper()
	return newEnvWith(t, configYAML, githubtest.Options{})
}

// newEnvWith is newEnv on a test server made with opts.
func newEnvWith(t testing.TB, configYAML string, opts githubtest.Options) *env {
	t.Helper()
	return newEnvWithAs(t, runAs{}, configYAML, opts)
}

// newEnvWithAs is newEnvWith with ralph run as as says.
func newEnvWithAs(t testing.TB, as runAs, configYAML string, opts githubtest.Options) *env {
	t.Helper()
	e := &env{t: t, srv: githubtest.New(t, opts), control: controlDir(t)}
	e.setUser(as)
	e.srv.SetPermission(maintainer, "admin")
	seed := filepath.Join(e.tempDir(), "seed")
	e.git("", "clone", "-q", e.srv.BareRepo, seed)
	if configYAML != "" {
		cfgPath := filepath.Join(seed, ".github", "ralph.yml")
		if err := os.MkdirAll(filepath.Dir(cfgPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfgPath, []byte(configYAML), 0o644); err != nil {
			t.Fatal(err)
		}
		e.own(seed)
		e.git(seed, "add", "-A")
		e.git(seed, "-c", "user.name=Mona", "-c", "user.email=mona@example.com", "commit", "-q", "-m", "add ralph config")
		e.git(seed, "push", "-q", "origin", "HEAD:main")
	}
	return e
}

func (e *env) gitEnv() []string {
	return append(append(os.Environ(), "HOME="+e.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0"), e.userEnv()...)
}

// gitCommand is the test's own git, run as ralph's user (which owns the origin and the checkouts).
func (e *env) gitCommand(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = e.gitEnv()
	cmd.SysProcAttr = e.sysProcAttr()
	return cmd
}

func (e *env) git(dir string, args ...string) string {
	e.t.Helper()
	out, err := e.gitCommand(dir, args...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitOK runs git and says whether it succeeded.
func (e *env) gitOK(dir string, args ...string) bool {
	return e.gitCommand(dir, args...).Run() == nil
}

// result is one run of the binary.
type result struct {
	exit    int
	stdout  string
	stderr  string
	outputs map[string]string
	summary string
	runID   int64 // its GITHUB_RUN_ID
	maxRSS  int64 // the process's peak resident memory, KiB
}

// run runs the action once for an event, in a fresh clone, as a GitHub Actions job would.
func (e *env) run(event string, payload any, inputs map[string]string) result {
	e.t.Helper()
	return e.start(event, payload, inputs, runOpts{}).wait()
}

// runOpts is what a run may change of the environment GitHub Actions gives it.
type runOpts struct {
	runID   int64             // GITHUB_RUN_ID; 0: 1000 + the run's number
	attempt int               // GITHUB_RUN_ATTEMPT; 0: 1
	env     map[string]string // more variables (RALPH_TEST_CRASH_AT, …)
	// track reports the run to the server's Actions API as GitHub does: in progress from its start,
	// completed when it exits (a killed run stays in progress until the test says otherwise).
	track bool
	// workflow is the file in .github/workflows the run is of (GITHUB_WORKFLOW_REF); "": ralph.yml.
	workflow string
}

// pending is a started run of the binary.
type pending struct {
	e                *env
	n, runID         int64
	event            string
	cmd              *exec.Cmd
	stdout, stderr   bytes.Buffer
	outPath, sumPath string
	track            bool
	killed           bool
	peakOut          string // where peakrss writes ralph's peak memory (env.peak)
}

// start starts the action for an event, in a fresh clone, and does not wait for it.
func (e *env) start(event string, payload any, inputs map[string]string, o runOpts) *pending {
	e.t.Helper()
	p := e.prepare(event, payload, inputs, o)
	p.launch()
	return p
}

// prepare makes a run ready to launch (the clone, the event file, the environment), so that several runs
// can then be launched at the same moment.
func (e *env) prepare(event string, payload any, inputs map[string]string, o runOpts) *pending {
	e.t.Helper()
	n := e.runs.Add(1)
	runID := o.runID
	if runID == 0 {
		runID = 1000 + n
	}
	attempt := o.attempt
	if attempt == 0 {
		attempt = 1
	}
	dir := e.tempDir()
	work := filepath.Join(dir, "work")
	// --no-local: a pack through upload-pack, a consistent snapshot while other runs push (a local clone
	// copies the object files one by one and fails on one that moved under it).
	e.git("", "clone", "-q", "--no-local", e.srv.BareRepo, work)
	if u := e.srv.GitURL(); u != "" {
		e.git(work, "remote", "set-url", "origin", u) // git over the server's smart HTTP, as on GitHub
	}
	// actions/checkout leaves the token in the checkout's config unless persist-credentials is false.
	e.git(work, "config", "--local", "http.https://github.com/.extraheader", "AUTHORIZATION: basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:test-token")))
	eventPath := filepath.Join(dir, "event.json")
	b, err := json.Marshal(payload)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(eventPath, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	ref, workflowRef := "refs/heads/main", "octo/demo/.github/workflows/ralph.yml@refs/heads/main"
	if o.workflow != "" {
		workflowRef = "octo/demo/.github/workflows/" + o.workflow + "@" + ref
	}
	if pr, head, merged := pullOf(event, b); pr != 0 {
		// A pull request's events run on its merge ref, as on GitHub: the workflow of refs/pull/N/merge,
		// and actions/checkout checks out the pull request's work (the agent's, on ralph's branch).
		ref = fmt.Sprintf("refs/pull/%d/merge", pr)
		workflowRef = "octo/demo/.github/workflows/ralph.yml@" + ref
		if !merged && e.gitOK(work, "rev-parse", "--verify", "-q", "origin/"+head) {
			e.git(work, "checkout", "-q", "--detach", "origin/"+head)
		}
	}
	outPath, sumPath := filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	for _, p := range []string{outPath, sumPath} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	// The runner's layout in a container action: the run's directory plays /github (docker makes it 0755),
	// with the file commands (world-writable, as the runner mounts them), the runner's temp directory with
	// the credential actions/checkout v6 persists there and includes from the checkout's config, and the
	// workspace. Only ralph's boundary keeps the agent out of it. The agent's tests find it in "rundir".
	fileCommands := filepath.Join(dir, "file_commands")
	runnerTemp := filepath.Join(dir, "runner_temp")
	for _, d := range []string{fileCommands, runnerTemp} {
		if err := os.Mkdir(d, 0o777); err != nil {
			e.t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, f := range []string{"set_env", "add_path"} {
		if err := os.WriteFile(filepath.Join(fileCommands, f), nil, 0o666); err != nil {
			e.t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(fileCommands, f), 0o666); err != nil {
			e.t.Fatal(err)
		}
	}
	credFile := filepath.Join(runnerTemp, "git-credentials-1234.config")
	if err := os.WriteFile(credFile, []byte("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:test-token"))+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.git(work, "config", "--local", "includeIf.gitdir:"+filepath.Join(work, ".git")+"/.path", credFile)
	for _, d := range []string{dir, work} {
		if err := os.Chmod(d, 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.control, "rundir"), []byte(dir), 0o644); err != nil {
		e.t.Fatal(err)
	}
	// In user mode ralph's user is the runner's too: it owns the run's directory and all in it.
	e.own(dir)
	e.resetAgentUser()
	vars := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": eventPath,
		"GITHUB_REPOSITORY": "octo/demo", "GITHUB_REPOSITORY_OWNER": "octo", "GITHUB_WORKSPACE": work,
		"GITHUB_API_URL": e.srv.URL, "GITHUB_SERVER_URL": e.srv.ServerURL, "GITHUB_GRAPHQL_URL": e.srv.GraphQLURL,
		"GITHUB_OUTPUT": outPath, "GITHUB_STEP_SUMMARY": sumPath, "RUNNER_TEMP": runnerTemp,
		"GITHUB_ENV": filepath.Join(fileCommands, "set_env"), "GITHUB_PATH": filepath.Join(fileCommands, "add_path"), "GITHUB_RUN_ID": strconv.FormatInt(runID, 10),
		"GITHUB_RUN_ATTEMPT": strconv.Itoa(attempt), "GITHUB_ACTOR": maintainer,
		"GITHUB_WORKFLOW_REF": workflowRef, "GITHUB_REF": ref,
		"INPUT_TOKEN": "test-token", "INPUT_CONFIG": ".github/ralph.yml", "INPUT_DRY_RUN": "false",
		"INPUT_ISSUE": "", "INPUT_COMMAND": "",
		"RALPH_TEST_CONTROL": e.control, "RALPH_AGENT_WRITABLE": e.control,
		// The scripted agent's directory, which Landlock would keep it from reading.
		"RALPH_AGENT_READABLE": agentReadable(e.t),
		// A credential under another name: the agent must not see it either.
		"SOME_COPY_OF_THE_TOKEN": "test-token",
	}
	for k, v := range inputs {
		vars["INPUT_"+strings.ToUpper(k)] = v
	}
	for k, v := range e.extra {
		vars[k] = v
	}
	for k, v := range o.env {
		vars[k] = v
	}
	p := &pending{e: e, n: n, runID: runID, event: event, outPath: outPath, sumPath: sumPath, track: o.track}
	p.cmd = exec.Command(binary, "action")
	if e.peak {
		// A file ralph's user may write, whoever that is.
		p.peakOut = filepath.Join(dir, "peakrss")
		if err := os.WriteFile(p.peakOut, nil, 0o666); err != nil {
			e.t.Fatal(err)
		}
		if err := os.Chmod(p.peakOut, 0o666); err != nil {
			e.t.Fatal(err)
		}
		p.cmd = exec.Command(peakrss, binary, "action")
		vars["PEAKRSS_OUT"] = p.peakOut
	}
	p.cmd.Dir = work
	p.cmd.Env = e.gitEnv()
	for k, v := range vars {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.SysProcAttr = e.sysProcAttr()
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	return p
}

// launch starts a prepared run.
func (p *pending) launch() {
	p.e.t.Helper()
	if p.track {
		p.e.srv.SetWorkflowRun(p.runID, "in_progress", "")
	}
	if err := p.cmd.Start(); err != nil {
		p.e.t.Fatal(err)
	}
}

// kill stops the run with SIGKILL, as a runner that dies does: no cleanup of any kind.
func (p *pending) kill() {
	p.killed = true
	_ = p.cmd.Process.Kill()
}

// wait waits for the run to end and reads what it left.
func (p *pending) wait() result {
	e := p.e
	e.t.Helper()
	err := p.cmd.Wait()
	r := result{stdout: p.stdout.String(), stderr: p.stderr.String(), runID: p.runID}
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss
	}
	if p.peakOut != "" {
		b, err := os.ReadFile(p.peakOut)
		if err != nil {
			e.t.Fatal(err)
		}
		if r.maxRSS, err = strconv.ParseInt(string(b), 10, 64); err != nil {
			e.t.Fatalf("peakrss wrote %q: %v", b, err)
		}
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	if p.track && !p.killed {
		conclusion := "success"
		if r.exit != 0 {
			conclusion = "failure"
		}
		e.srv.SetWorkflowRun(p.runID, "completed", conclusion)
	}
	outB, _ := os.ReadFile(p.outPath)
	r.outputs = parseOutputs(e.t, string(outB))
	sumB, _ := os.ReadFile(p.sumPath)
	r.summary = string(sumB)
	if testing.Verbose() {
		e.t.Logf("run %d (%s, run id %d): exit %d, outputs %v\n%s%s", p.n, p.event, p.runID, r.exit, r.outputs, r.stdout, r.stderr)
	}
	e.checkAgentUser()
	// The one place the token may appear is the ::add-mask:: command that hides it in the log.
	if strings.Contains(strings.Replace(r.stdout, "::add-mask::test-token", "", 1)+r.stderr, "test-token") {
		e.t.Errorf("run %d printed the token:\n%s%s", p.n, r.stdout, r.stderr)
	}
	return r
}

// parseOutputs reads GITHUB_OUTPUT's `name<<DELIM` heredoc format.
func parseOutputs(t testing.TB, s string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			if k, v, ok := strings.Cut(lines[i], "="); ok {
				out[k] = v
			}
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

// --- events, built from GitHub's real webhook payloads ---

func loadEvent(t testing.TB, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "internal", "action", "testdata", "events", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if repo, ok := m["repository"].(map[string]any); ok {
		repo["default_branch"] = "main" // the test server's repository's
	}
	return m
}

// pullOf is the pull request a pull_request or pull_request_review event is about: its number, head branch
// and whether it was merged (0 for other events).
func pullOf(event string, payload []byte) (n int, head string, merged bool) {
	if event != "pull_request" && event != "pull_request_review" {
		return 0, "", false
	}
	var ev struct {
		PullRequest struct {
			Number int  `json:"number"`
			Merged bool `json:"merged"`
			Head   struct {
				Ref string `json:"ref"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	if json.Unmarshal(payload, &ev) != nil {
		return 0, "", false
	}
	return ev.PullRequest.Number, ev.PullRequest.Head.Ref, ev.PullRequest.Merged
}

func labeledEvent(t testing.TB, n int, label, sender string) map[string]any {
	ev := loadEvent(t, "issues.labeled")
	ev["issue"].(map[string]any)["number"] = n
	ev["label"].(map[string]any)["name"] = label
	ev["sender"].(map[string]any)["login"] = sender
	return ev
}

func commentEvent(t testing.TB, n int, body, user string) map[string]any {
	ev := loadEvent(t, "issue_comment.created")
	issue := ev["issue"].(map[string]any)
	issue["number"] = n
	delete(issue, "pull_request")
	c := ev["comment"].(map[string]any)
	c["body"] = body
	c["user"].(map[string]any)["login"] = user
	c["user"].(map[string]any)["type"] = "User"
	ev["sender"].(map[string]any)["login"] = user
	return ev
}

func dispatchEvent(t testing.TB, inputs map[string]any) map[string]any {
	ev := loadEvent(t, "workflow_dispatch")
	ev["inputs"] = inputs
	return ev
}

func pullClosedEvent(t testing.TB, pr githubtest.Pull) map[string]any {
	ev := loadEvent(t, "pull_request.closed")
	p := ev["pull_request"].(map[string]any)
	p["number"] = pr.Number
	p["body"] = pr.Body
	p["merged"] = pr.Merged
	head := p["head"].(map[string]any)
	head["ref"] = pr.Head
	return ev
}

// label runs the action for ralph:build added to issue n by sender.
func (e *env) label(n int, sender string) result {
	e.srv.AddLabel(n, workflow.LabelBuild, sender)
	r := e.run("issues", labeledEvent(e.t, n, workflow.LabelBuild, sender), nil)
	e.invariants(n)
	return r
}

func (e *env) comment(n int, body, user string) result {
	e.srv.AddComment(n, user, body)
	r := e.run("issue_comment", commentEvent(e.t, n, body, user), nil)
	e.invariants(n)
	return r
}

// invariants hold after every run: at most one state label (exactly one once the status comment exists),
// at most one status comment of ralph's own, each artifact comment posted once.
func (e *env) invariants(n int) {
	e.t.Helper()
	var states []string
	for _, l := range e.srv.Labels(n) {
		if _, ok := workflow.StateFromLabel(l); ok {
			states = append(states, l)
		}
	}
	status := 0
	markers := map[string]int{}
	for _, c := range e.srv.Comments(n) {
		if e.isStatus(c) {
			status++
		}
		if m := artifactMarker.FindString(c.Body); m != "" {
			markers[m]++
		}
	}
	if status > 1 {
		e.t.Errorf("#%d has %d status comments", n, status)
	}
	if len(states) > 1 || (status == 1 && len(states) != 1) {
		e.t.Errorf("#%d has state labels %v (status comments: %d)", n, states, status)
	}
	for m, c := range markers {
		if c > 1 {
			e.t.Errorf("#%d has %d comments with %s", n, c, m)
		}
	}
}

var artifactMarker = regexp.MustCompile(`<!-- ralph:artifact [a-z-]+/\d+ -->`)

// chain runs the workflow_dispatch runs ralph requested, as GitHub would, until none is left; more than max
// runs fails the test.
func (e *env) chain(max int) []result {
	e.t.Helper()
	var out []result
	for {
		r, ok := e.next()
		if !ok {
			return out
		}
		if out = append(out, r); len(out) > max {
			e.t.Fatalf("the chain did not stop after %d runs", max)
		}
	}
}

// next runs the oldest dispatch not run yet; false when there is none.
func (e *env) next() (result, bool) {
	e.t.Helper()
	ds := e.srv.Dispatches()
	if e.seen >= len(ds) {
		return result{}, false
	}
	d := ds[e.seen]
	e.seen++
	if d.Workflow != "ralph.yml" || d.Ref != "main" {
		e.t.Fatalf("dispatch %d: workflow %q ref %q, want ralph.yml on main", e.seen, d.Workflow, d.Ref)
	}
	r := e.run("workflow_dispatch", dispatchEvent(e.t, d.Inputs), nil)
	if n, err := strconv.Atoi(r.outputs["issue"]); err == nil {
		e.invariants(n)
	}
	return r, true
}

// seedRecord puts issue n in state as ralph would have left it: its state label, and its status comment
// with a record of that state (the label alone is only a view, which enrolls nothing).
func (e *env) seedRecord(n int, state workflow.State) {
	e.t.Helper()
	e.srv.AddLabel(n, state.Label(), e.srv.TokenLogin())
	e.srv.AddComment(n, e.srv.TokenLogin(), engine.RenderStatus(n, record.Record{State: state}, config.Default(), record.Links{}))
}

// --- assertions on what the server holds ---

func (e *env) state(n int) workflow.State {
	e.t.Helper()
	var states []workflow.State
	for _, l := range e.srv.Labels(n) {
		if s, ok := workflow.StateFromLabel(l); ok {
			states = append(states, s)
		}
	}
	if len(states) != 1 {
		e.t.Fatalf("#%d has %d state labels %v, want exactly one (labels: %v)", n, len(states), states, e.srv.Labels(n))
	}
	return states[0]
}

func (e *env) wantState(n int, want workflow.State) {
	e.t.Helper()
	if got := e.state(n); got != want {
		e.t.Fatalf("#%d is %s, want %s", n, got.Title(), want.Title())
	}
}

// isStatus says whether c is ralph's status comment: the marker, in a comment ralph (the token's account)
// wrote. Anyone can post a comment that starts with the marker; ralph ignores those.
func (e *env) isStatus(c githubtest.Comment) bool {
	return c.User == e.srv.TokenLogin() && strings.HasPrefix(c.Body, "<!-- ralph:status -->")
}

// statusComment returns the one status comment.
func (e *env) statusComment(n int) string {
	e.t.Helper()
	var found []string
	for _, c := range e.srv.Comments(n) {
		if e.isStatus(c) {
			found = append(found, c.Body)
		}
	}
	if len(found) != 1 {
		e.t.Fatalf("#%d has %d status comments, want 1", n, len(found))
	}
	return found[0]
}

// commentsStarting counts comments whose body starts with prefix.
func (e *env) commentsStarting(n int, prefix string) int {
	c := 0
	for _, cm := range e.srv.Comments(n) {
		if strings.HasPrefix(cm.Body, prefix) {
			c++
		}
	}
	return c
}

func (e *env) invocations() []string {
	b, err := os.ReadFile(filepath.Join(e.control, "invocations"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	// Only whole lines count: the agent's >> makes the file before it writes its line, and a test that
	// stops the agent once it was invoked must not take the empty file for an invocation.
	var out []string
	lines := strings.SplitAfter(string(b), "\n")
	for _, l := range lines {
		if strings.HasSuffix(l, "\n") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

func (e *env) setControl(name, value string) {
	if err := os.WriteFile(filepath.Join(e.control, name), []byte(value), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// branch lists the commit subjects on a branch of the origin, newest first, and its files.
func (e *env) branch(name string) (subjects []string, files []string) {
	e.t.Helper()
	log := e.git(e.srv.BareRepo, "log", "--format=%s", "refs/heads/"+name)
	tree := e.git(e.srv.BareRepo, "ls-tree", "-r", "--name-only", "refs/heads/"+name)
	return strings.Split(log, "\n"), strings.Split(tree, "\n")
}

func (e *env) branchExists(name string) bool {
	return e.gitCommand(e.srv.BareRepo, "rev-parse", "--verify", "-q", "refs/heads/"+name).Run() == nil
}

func matching(list []string, re string) []string {
	r := regexp.MustCompile(re)
	var out []string
	for _, s := range list {
		if r.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

func hasAll(list []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(list, w) {
			return false
		}
	}
	return true
}

func readFile(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	return string(b), err
}

func itoa(n int) string { return strconv.Itoa(n) }

func removeControl(e *env, name string) error { return os.Remove(filepath.Join(e.control, name)) }
