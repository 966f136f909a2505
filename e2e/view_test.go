package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// viewProbe is what the agent does in the view, in its research step: it builds with the job's Go and
// runs the job's Node, where setup-go and setup-node put them, and then, hostile, looks around. Each thing
// it reached is a line in the leak file.
const viewProbe = `
ctl="$RALPH_TEST_CONTROL"
{ command -v go; go version; go build -o "$TMPDIR/app" . && "$TMPDIR/app"; } > "$ctl/view.go" 2>&1
{ command -v node; node -e 'console.log("node ran " + process.version)'; command -v npm; npm test; } > "$ctl/view.node" 2>&1
# The caches the job restored, read-only: readable, the module cache a proxy of the step's Go, never written.
{ cat "$RUNNER_HOME_PROBE/.npm/job-npm" "$RUNNER_HOME_PROBE/.cache/go-build/job-go-build" "$RUNNER_HOME_PROBE/.cache/pip/job-pip"; go env GOPROXY GOCACHE; cat "$HOME/.cache/go-build/job-go-build"; } > "$ctl/view.caches" 2>&1
for d in .npm .cache/go-build .cache/pip go/pkg/mod; do
  touch "$RUNNER_HOME_PROBE/$d/agent-was-here" 2>/dev/null && reached "wrote the job's cache $d"
done
{ java -version 2>&1 | head -1; python3 -c 'import ssl, sys; print("python ran", sys.version.split()[0])'; cargo --version; } > "$ctl/view.more" 2>&1
id -u > "$ctl/view.uid"
grep -E '^Cap(Eff|Bnd)' /proc/self/status > "$ctl/view.caps"
reached() { echo "$1" >> "$ctl/leak"; }
cat "$RUNNER_HOME_PROBE/.ssh/id_ed25519" > /dev/null 2>&1 && reached "read the runner's ssh key"
ls "$RUNNER_HOME_PROBE" > /dev/null 2>&1 && reached "listed the runner's home"
ls "$RUNNER_TEMP_PROBE" > /dev/null 2>&1 && reached "listed RUNNER_TEMP"
cat "$RUNNER_TEMP_PROBE/_runner_file_commands/set_output" > /dev/null 2>&1 && reached "read GITHUB_OUTPUT"
{ echo EVIL=1 >> "$RUNNER_TEMP_PROBE/_runner_file_commands/set_env"; } 2>/dev/null && reached "wrote GITHUB_ENV"
env | grep -q ACTIONS_RUNTIME_TOKEN && reached "has ACTIONS_RUNTIME_TOKEN"
grep -qa ACTIONS_RUNTIME_TOKEN /proc/1/environ 2>/dev/null && reached "read /proc/1/environ"
for p in /proc/[0-9]*; do grep -qa INPUT_TOKEN "$p/environ" 2>/dev/null && reached "read $p/environ"; done
[ -e /var/run/docker.sock ] && reached "sees the Docker socket"
ls /var/run > /dev/null 2>&1 && reached "listed /var/run"
for d in /usr /etc /opt /bin "$(dirname "$(command -v go)")"; do
  touch "$d/agent-was-here" 2>/dev/null && reached "wrote $d"
done
sudo -n true 2>/dev/null && reached "ran sudo"
echo done > "$ctl/view.done"
`

// TestToolchainView runs a research step through the composite action's run: script (script/action.sh run)
// as a runner's composite step does, on a host whose Go and Node (with npm) are where setup-go and
// setup-node put them, their bin first on the step's PATH, and whose home holds the caches the job
// restored: the repository is a Go module and a Node project, the scripted agent builds with the job's Go
// and runs its node and npm test, reads the job's caches (its Go modules are the step's GOPROXY, its Go
// build cache the start of the step's), the
// verify commands are go test ./... and npm test, and the hostile agent reaches neither the rest of the
// runner's home, the file commands, the runner's token, ralph's process, the Docker socket, nor writes in
// the view or the job's caches.
// script/container-test.sh runs it with an engine (RALPH_CONTAINER_DOCKER, RALPH_CONTAINER_VIEW_IMAGE).
func TestToolchainView(t *testing.T) {
	docker, _, _ := containerEngine(t)
	image := os.Getenv("RALPH_CONTAINER_VIEW_IMAGE")
	if image == "" {
		t.Skip("RALPH_CONTAINER_VIEW_IMAGE names no image (by digest or id) for the view")
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("no go here to place in the tool cache: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node here to place in the tool cache")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm here to place in the tool cache")
	}
	npmCLI, err := filepath.EvalSymlinks(npm) // node_modules/npm/bin/npm-cli.js
	if err != nil {
		t.Fatal(err)
	}
	// The tool cache as setup-go and setup-node leave it.
	goDir := "/opt/hostedtoolcache/go/1.26.0/x64"
	nodeDir := "/opt/hostedtoolcache/node/22.0.0/x64"
	for _, c := range [][]string{
		{"mkdir", "-p", filepath.Dir(goDir), filepath.Join(nodeDir, "bin")},
		{"rm", "-rf", goDir}, {"cp", "-a", strings.TrimSpace(string(goroot)), goDir},
		{"cp", node, filepath.Join(nodeDir, "bin", "node")},
		// npm as setup-node's archive has it: lib/node_modules/npm, bin/npm a link to its npm-cli.js.
		{"mkdir", "-p", filepath.Join(nodeDir, "lib", "node_modules")},
		{"cp", "-a", filepath.Dir(filepath.Dir(npmCLI)), filepath.Join(nodeDir, "lib", "node_modules", "npm")},
		{"ln", "-s", "../lib/node_modules/npm/bin/npm-cli.js", filepath.Join(nodeDir, "bin", "npm")},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	t.Cleanup(func() { os.RemoveAll("/opt/hostedtoolcache") })

	runner := t.TempDir()
	temp := filepath.Join(runner, "work", "_temp")
	// The scripted agent, mounted as TestContainerStep mounts it (ralph closes the runner's directories
	// around RUNNER_TEMP to the agent's uid).
	agentCopy := "/ralph-test/agent.sh"
	e := newEnvWith(t, "agent:\n  preset: command\n  command: sh "+agentCopy+"\n  timeout: 3m\n  landlock: required\n"+
		"  env:\n    RALPH_TEST_CONTROL: \"\"\n    RUNNER_HOME_PROBE: \"\"\n    RUNNER_TEMP_PROBE: \"\"\n    RUSTUP_HOME: \"\"\n    GOFLAGS: -mod=mod\n    GOTOOLCHAIN: local\n"+
		"verify:\n  - go test ./...\n  - npm test\n", githubtest.Options{GitHTTP: true})
	e.pushFile("go.mod", "module example.test/app\n\ngo 1.21\n")
	e.pushFile("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"go built\") }\n")
	e.pushFile("main_test.go", "package main\n\nimport \"testing\"\n\nfunc TestMain1(t *testing.T) {}\n")
	e.pushFile("package.json", `{"name": "app", "version": "1.0.0", "private": true, "scripts": {"test": "node test.js"}}`+"\n")
	e.pushFile("test.js", "console.log('npm test ran with node ' + process.version);\n")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	e.setControl("extra_research", viewProbe)
	e.setControl("phases", "1")

	// The runner's directories: its home (with a key and a toolchain home), RUNNER_TEMP with the file
	// commands and the event, the workspace; all the runner user's.
	home, work := filepath.Join(runner, "home"), filepath.Join(runner, "work", "demo", "demo")
	fc := filepath.Join(temp, "_runner_file_commands")
	jobModules := filepath.Join(home, "go", "pkg", "mod", "cache", "download")
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".cargo", "bin"), fc, filepath.Join(temp, "_github_workflow"),
		filepath.Join(home, ".npm"), filepath.Join(home, ".cache", "go-build"), filepath.Join(home, ".cache", "pip"), jobModules} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	event, err := json.Marshal(labeledEvent(t, n, workflow.LabelBuild, maintainer))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{filepath.Join(home, ".ssh", "id_ed25519"): "runner's key",
		filepath.Join(home, ".npm", "job-npm"): "npm's cache\n", filepath.Join(home, ".cache", "go-build", "job-go-build"): "go's build cache\n",
		filepath.Join(home, ".cache", "pip", "job-pip"):       "pip's cache\n",
		filepath.Join(temp, "_github_workflow", "event.json"): string(event)}
	for _, f := range []string{"set_output", "step_summary", "set_env", "add_path", "save_state"} {
		files[filepath.Join(fc, f)] = ""
	}
	for p, b := range files {
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.git("", "clone", "-q", e.srv.BareRepo, work)
	e.git(work, "remote", "set-url", "origin", e.srv.GitURL())
	// The job built and tested the module before ralph's step (its go-build as actions/setup-go restores it).
	prefill := exec.Command(filepath.Join(goDir, "bin", "go"), "test", "./...")
	prefill.Dir, prefill.Env = work, append(os.Environ(), "GOROOT="+goDir, "GOCACHE="+filepath.Join(home, ".cache", "go-build"), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	if out, err := prefill.CombinedOutput(); err != nil {
		t.Fatalf("the job's go test: %v\n%s", err, out)
	}
	chownAll(t, runner, runnerUID)

	env := []string{
		// This machine's Rust, where rustup puts it (the runner's are ~/.cargo and ~/.rustup).
		"PATH=" + goDir + "/bin:" + nodeDir + "/bin:/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + home, "RUNNER_OS=Linux", "RUNNER_TEMP=" + temp, "RUNNER_TOOL_CACHE=/opt/hostedtoolcache",
		"GITHUB_WORKSPACE=" + work, "GITHUB_EVENT_PATH=" + filepath.Join(temp, "_github_workflow", "event.json"),
		"GITHUB_OUTPUT=" + filepath.Join(fc, "set_output"), "GITHUB_STEP_SUMMARY=" + filepath.Join(fc, "step_summary"),
		"GITHUB_ENV=" + filepath.Join(fc, "set_env"), "GITHUB_PATH=" + filepath.Join(fc, "add_path"), "GITHUB_STATE=" + filepath.Join(fc, "save_state"),
		"GITHUB_REPOSITORY=octo/demo", "GITHUB_REPOSITORY_OWNER=octo", "GITHUB_ACTOR=" + maintainer,
		"GITHUB_API_URL=" + e.srv.URL, "GITHUB_SERVER_URL=" + e.srv.ServerURL, "GITHUB_GRAPHQL_URL=" + e.srv.GraphQLURL,
		"GITHUB_RUN_ID=1001", "GITHUB_RUN_ATTEMPT=1", "GITHUB_WORKFLOW_REF=octo/demo/.github/workflows/ralph.yml@refs/heads/main",
		"GOROOT=" + goDir, "CARGO_HOME=/root/.cargo", "RUSTUP_HOME=/root/.rustup", "ACTIONS_RUNTIME_TOKEN=runner-runtime-token", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=runner-oidc-token",
		"INPUT_TOKEN=test-token", "INPUT_CONFIG=.github/ralph.yml", "INPUT_DRY_RUN=false", "INPUT_ISSUE=", "INPUT_COMMAND=",
		"RALPH_IMAGE=" + image, "RALPH_NETWORK_FIREWALL=off",
		"RALPH_TEST_CONTROL=" + e.control, "RALPH_AGENT_WRITABLE=" + e.control, "RALPH_AGENT_READABLE=/ralph-test",
		"RUNNER_HOME_PROBE=" + home, "RUNNER_TEMP_PROBE=" + temp,
		"RALPH_VIEW_DOCKER_ARGS=--network host -v " + e.control + ":" + e.control + " -v " + testdataDir(t) + ":/ralph-test:ro",
		"DOCKER_HOST=" + strings.TrimPrefix(strings.Join(docker[1:], " "), "-H "),
	}
	eventPath := filepath.Join(temp, "_github_workflow", "event.json")
	step := func(eventName string) []byte {
		t.Helper()
		cmd := exec.Command("bash", "../script/action.sh", "run")
		cmd.Env = append(env, "GITHUB_EVENT_NAME="+eventName)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("the view's step (%s): %s, %v\n%s", eventName, time.Since(start).Round(time.Millisecond), err, out)
		if err != nil {
			t.Fatalf("the step in the view failed: %v", err)
		}
		return out
	}
	out := step("issues")
	if got, want := e.state(n), workflow.ReadyForPlan; got != want {
		t.Errorf("after research the issue is %q, want %q", got, want)
	}
	if got := readControl(t, e, "view.go"); !strings.Contains(got, goDir+"/bin/go") || !strings.Contains(got, "go built") {
		t.Errorf("the agent's go build, with the job's Go:\n%s", got)
	}
	if got := readControl(t, e, "view.node"); !strings.Contains(got, nodeDir+"/bin/node") || !strings.Contains(got, "node ran") ||
		!strings.Contains(got, nodeDir+"/bin/npm") || !strings.Contains(got, "npm test ran with node") {
		t.Errorf("the agent's node, the job's:\n%s", got)
	}
	if got := readControl(t, e, "view.caps"); got != "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n" {
		t.Errorf("the agent's capabilities:\n%s", got)
	}
	if got := readControl(t, e, "view.caches"); !strings.Contains(got, "npm's cache\ngo's build cache\npip's cache\nfile://"+jobModules+",") ||
		!strings.HasSuffix(got, "/home/.cache/go-build\ngo's build cache\n") {
		t.Errorf("the job's caches, as the agent reads them (its cache files, then go env GOPROXY):\n%s", got)
	}
	for _, f := range []string{"view.go", "view.node", "view.more", "view.uid", "view.caches"} {
		t.Logf("%s: %s", f, readControl(t, e, f))
	}
	if leak, _ := os.ReadFile(filepath.Join(e.control, "leak")); len(leak) != 0 {
		t.Errorf("the agent in the view reached:\n%s", leak)
	}
	if readControl(t, e, "view.done") != "done\n" {
		t.Errorf("the probe did not finish")
	}
	outputs, _ := os.ReadFile(filepath.Join(fc, "set_output"))
	if got := parseOutputs(t, string(outputs))["step"]; got != "research" {
		t.Errorf("the step output through the file commands = %q, want research:\n%s", got, outputs)
	}
	// The rest of the chain, each step a run of the composite's run: as the dispatches ralph makes start
	// it, to the pull request; the implement phase's verify is go test ./... with the tool cache's Go.
	all := string(out)
	for seen := 1; e.state(n) != workflow.InReview; seen++ {
		ds := e.srv.Dispatches()
		if seen > len(ds) || seen > 10 {
			t.Fatalf("the chain stopped at %s", e.state(n))
		}
		ev, err := json.Marshal(dispatchEvent(t, ds[seen-1].Inputs))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(eventPath, ev, 0o644); err != nil {
			t.Fatal(err)
		}
		all += string(step("workflow_dispatch"))
	}
	for _, v := range []string{"go test ./...", "npm test"} {
		if !strings.Contains(all, v) {
			t.Errorf("no verify (%s) in the chain's log", v)
		}
	}
	if prs := e.srv.Pulls(); len(prs) != 1 {
		t.Errorf("%d pull requests, want 1", len(prs))
	}
	if strings.Contains(all, "runner-runtime-token") || strings.Contains(all, "runner-oidc-token") {
		t.Errorf("the runner's tokens are in the step's log")
	}
}
