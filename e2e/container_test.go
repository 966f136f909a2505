package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/agent/agenttest"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/preset"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// runnerUID is the user GitHub's hosted runners run as: it owns the workspace and the directories a runner
// mounts into a container action.
const runnerUID = 1001

// containerEngine is the Docker engine and images script/container-test.sh built (RALPH_CONTAINER_DOCKER:
// the docker command, RALPH_CONTAINER_IMAGE: the slim image, RALPH_CONTAINER_SOCKET: the engine's socket,
// which a runner mounts into the container); the test skips without them.
func containerEngine(t *testing.T) (docker []string, image, socket string) {
	t.Helper()
	docker = strings.Fields(os.Getenv("RALPH_CONTAINER_DOCKER"))
	image, socket = os.Getenv("RALPH_CONTAINER_IMAGE"), os.Getenv("RALPH_CONTAINER_SOCKET")
	if len(docker) == 0 || image == "" || socket == "" {
		t.Skip("no Docker engine named (RALPH_CONTAINER_DOCKER, RALPH_CONTAINER_IMAGE, RALPH_CONTAINER_SOCKET): script/container-test.sh builds the images and runs this test in one")
	}
	needRoot(t)
	return docker, image, socket
}

// containerProbe is the hostile agent's look around from inside the image, after its research: each thing
// it reached is a line in the leak file, and its uid and Landlock's verdict go to the control directory.
const containerProbe = `
ctl="$RALPH_TEST_CONTROL"
id -u > "$ctl/probe.uid"
id -G > "$ctl/probe.groups"
reached() { echo "$1" >> "$ctl/leak"; }
# ralph is the container's first process: its environment (the token) and memory are not the agent's.
cat /proc/1/environ > /dev/null 2>&1 && reached "read /proc/1/environ"
ls /proc/1/fd > /dev/null 2>&1 && reached "listed /proc/1/fd"
head -c1 /proc/1/mem > /dev/null 2>&1 && reached "read /proc/1/mem"
# The runner's mounts: the event, the file commands, the workspace ralph checked out, its HOME.
for d in /github /github/workspace /github/home /github/workflow /github/file_commands; do
  ls "$d" > /dev/null 2>&1 && reached "listed $d"
done
cat /github/workflow/event.json > /dev/null 2>&1 && reached "read the event"
{ echo EVIL=1 >> /github/file_commands/set_env; } 2>/dev/null && reached "wrote GITHUB_ENV"
touch /github/workspace/agent-was-here 2>/dev/null && reached "wrote the workspace"
touch /github/home/agent-was-here 2>/dev/null && reached "wrote the runner's HOME"
# The Docker socket: connecting needs write permission on it.
[ -w /var/run/docker.sock ] && reached "may connect to the Docker socket"
[ -r /var/run/docker.sock ] && reached "may read the Docker socket"
# Landlock: a world-writable directory outside the agent's copy, HOME and TMPDIR stays closed.
if touch /var/tmp/agent-was-here 2>/dev/null || touch /dev/shm/agent-was-here 2>/dev/null; then
  echo open > "$ctl/probe.landlock"
else
  echo closed > "$ctl/probe.landlock"
fi
echo done > "$ctl/probe.done"
`

// TestContainerStep runs one real step (research, with the scripted agent of preset: command) in the slim
// image as a GitHub runner runs a container action: the runner's mounts owned by its uid 1001, the Docker
// socket, Docker's default capabilities and seccomp profile, and the GitHub test server reached over the
// host's network. From inside, the agent is another uid than ralph, Landlock is on, and the agent reaches
// neither ralph's /proc, nor /github, nor the socket; after the run, nothing in the mounts belongs to any
// uid but the runner's and root's.
func TestContainerStep(t *testing.T) {
	docker, image, socket := containerEngine(t)
	// Git over HTTP too, as on a runner (the checkout's origin is GitHub's URL): no path of the host's.
	e := newEnvWith(t, "agent:\n  preset: command\n  command: sh /ralph-test/agent.sh\n  timeout: 2m\n  landlock: required\n"+agentEnvYAML+"verify:\n  - test -f README.md\n", githubtest.Options{GitHTTP: true})
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	e.setControl("extra_research", containerProbe)

	out, run, fc := runnerStep(t, e, n, docker, image, socket, map[string]string{
		"RALPH_TEST_CONTROL": e.control, "RALPH_AGENT_WRITABLE": e.control, "RALPH_AGENT_READABLE": "/ralph-test",
	}, "-v", testdataDir(t)+":/ralph-test:ro", "-v", e.control+":"+e.control)

	if got, want := e.state(n), workflow.ReadyForPlan; got != want {
		t.Errorf("after research the issue is %q, want %q", got, want)
	}
	outputs, _ := os.ReadFile(filepath.Join(fc, "set_output"))
	if got := parseOutputs(t, string(outputs))["step"]; got != "research" {
		t.Errorf("output step = %q, want research", got)
	}
	if !strings.Contains(string(out), "landlock ABI") {
		t.Errorf("the log does not say Landlock is in force")
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(e.control, name))
		return strings.TrimSpace(string(b))
	}
	if read("probe.done") != "done" {
		t.Fatalf("the agent's probe did not run")
	}
	if uid := read("probe.uid"); uid == "0" || uid == "" {
		t.Errorf("the agent ran as uid %q, ralph's (root) own", uid)
	}
	if got := read("probe.landlock"); got != "closed" {
		t.Errorf("the agent wrote outside its copy, HOME and TMPDIR: Landlock is %q", got)
	}
	if l := e.leak(); l != "" {
		t.Errorf("the agent reached what is ralph's or the runner's:\n%s", l)
	}
	ownedByRunnerOrRoot(t, run)
}

// ownedByRunnerOrRoot: nothing in the mounts is left to another uid; every file is the runner's, or
// root's (ralph's).
func ownedByRunnerOrRoot(t *testing.T, run string) {
	t.Helper()
	filepath.WalkDir(run, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid != runnerUID && st.Uid != 0 {
			t.Errorf("%s is left owned by uid %d", p, st.Uid)
		}
		return nil
	})
}

// TestAgentImageStep runs the research step with the real CLI in each agent's image
// (RALPH_CONTAINER_AGENT_IMAGES: agent=image, space-separated), as TestContainerStep does, against a
// scripted model of the agent's vendor behind ralph's gateway: the CLI the image holds runs there, under
// ralph's boundary, and writes the document.
func TestAgentImageStep(t *testing.T) {
	docker, _, socket := containerEngine(t)
	images := strings.Fields(os.Getenv("RALPH_CONTAINER_AGENT_IMAGES"))
	if len(images) == 0 {
		t.Skip("RALPH_CONTAINER_AGENT_IMAGES names no agent's image")
	}
	for _, pair := range images {
		agent, image, _ := strings.Cut(pair, "=")
		t.Run(agent, func(t *testing.T) {
			content := "# Research: greeting\n\nWritten in the " + agent + " image.\n"
			var url, keyVar, key, model string
			var problems func() []string
			p, _ := preset.Lookup(agent)
			switch p.Vendor { // the scripted model of the preset's vendor
			case "anthropic":
				m := agenttest.NewAnthropic(t, modelKey, "", content)
				url, keyVar, key, model, problems = m.URL, "ANTHROPIC_API_KEY", modelKey, "claude-sonnet-4-5", m.Problems
			case "openai":
				m := agenttest.NewOpenAI(t, "sk-proj-ralphs-own", "", content)
				url, keyVar, key, model, problems = m.URL, "OPENAI_API_KEY", "sk-proj-ralphs-own", "gpt-5.1-codex", m.Problems
			case "gemini":
				m := agenttest.NewGemini(t, "AIza-ralphs-own", "", content)
				url, keyVar, key, model, problems = m.URL, "GEMINI_API_KEY", "AIza-ralphs-own", "gemini-2.5-pro", m.Problems
			default:
				t.Fatalf("no scripted model for %s", agent)
			}
			e := newEnvWith(t, "agent:\n  preset: "+agent+"\n  model: "+model+"\n  max_turns: 10\n  timeout: 3m\n  landlock: required\n"+
				"  env:\n    DISABLE_TELEMETRY: \"1\"\n    DISABLE_AUTOUPDATER: \"1\"\n    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: \"1\"\n"+
				"gateway:\n  upstream: "+url+"\n", githubtest.Options{GitHTTP: true})
			n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
			e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
			_, run, _ := runnerStep(t, e, n, docker, image, socket, map[string]string{keyVar: key})
			for _, p := range problems() {
				t.Errorf("scripted model: %s", p)
			}
			if got, want := e.state(n), workflow.ReadyForPlan; got != want {
				t.Errorf("after research the issue is %q, want %q", got, want)
			}
			_, files := e.branch(branch)
			docs := matching(files, `^thoughts/shared/research/.*-GH-0001-add-a-greeting\.md$`)
			if len(docs) != 1 {
				t.Fatalf("no research document on the branch: %v", files)
			}
			if got := e.git(e.srv.BareRepo, "show", "refs/heads/"+branch+":"+docs[0]); got+"\n" != content {
				t.Errorf("the committed document = %q, want %q", got, content)
			}
			ownedByRunnerOrRoot(t, run)
		})
	}
}

// runnerStep runs the label run of issue n in image as a GitHub runner runs a container action, with more
// variables and docker run arguments (mounts), and returns its log, the runner's directory (all the mounts)
// and the file commands' directory.
func runnerStep(t *testing.T, e *env, n int, docker []string, image, socket string, extraEnv map[string]string, mounts ...string) (out []byte, run, fc string) {
	t.Helper()
	// The runner's directories, as it makes them on the host: its temp directory's _github_home,
	// _github_workflow and _runner_file_commands, and the checkout (actions/checkout with
	// persist-credentials: false), all the runner user's.
	run = t.TempDir()
	if err := os.Chmod(run, 0o755); err != nil {
		t.Fatal(err)
	}
	fc = filepath.Join(run, "_runner_file_commands")
	home, wf, work := filepath.Join(run, "_github_home"), filepath.Join(run, "_github_workflow"), filepath.Join(run, "work")
	for _, d := range []string{home, wf, fc} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.git("", "clone", "-q", e.srv.BareRepo, work)
	e.git(work, "remote", "set-url", "origin", e.srv.GitURL())
	event, err := json.Marshal(labeledEvent(t, n, workflow.LabelBuild, maintainer))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{filepath.Join(wf, "event.json"): event}
	for _, f := range []string{"set_output", "step_summary", "set_env", "add_path", "save_state"} {
		files[filepath.Join(fc, f)] = nil
	}
	for p, b := range files {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chownAll(t, run, runnerUID)

	envs := map[string]string{
		"HOME": "/github/home", "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "issues",
		"GITHUB_EVENT_PATH": "/github/workflow/event.json", "GITHUB_WORKSPACE": "/github/workspace",
		"GITHUB_OUTPUT": "/github/file_commands/set_output", "GITHUB_STEP_SUMMARY": "/github/file_commands/step_summary",
		"GITHUB_ENV": "/github/file_commands/set_env", "GITHUB_PATH": "/github/file_commands/add_path",
		"GITHUB_STATE": "/github/file_commands/save_state", "RUNNER_TEMP": "/home/runner/work/_temp",
		"GITHUB_REPOSITORY": "octo/demo", "GITHUB_REPOSITORY_OWNER": "octo", "GITHUB_ACTOR": maintainer,
		"GITHUB_API_URL": e.srv.URL, "GITHUB_SERVER_URL": e.srv.ServerURL, "GITHUB_GRAPHQL_URL": e.srv.GraphQLURL,
		"GITHUB_RUN_ID": "1001", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_WORKFLOW_REF": "octo/demo/.github/workflows/ralph.yml@refs/heads/main",
		"INPUT_TOKEN":         "test-token", "INPUT_CONFIG": ".github/ralph.yml", "INPUT_DRY_RUN": "false",
		"INPUT_ISSUE": "", "INPUT_COMMAND": "",
	}
	for k, v := range extraEnv {
		envs[k] = v
	}
	// What the runner's docker run has, less its labels and names: no --privileged, no --cap-add, no
	// --security-opt, so Docker's default capabilities and seccomp profile apply.
	args := []string{"run", "--rm", "--network", "host", "--workdir", "/github/workspace",
		"-v", socket + ":/var/run/docker.sock",
		"-v", home + ":/github/home", "-v", wf + ":/github/workflow", "-v", fc + ":/github/file_commands",
		"-v", work + ":/github/workspace"}
	args = append(args, mounts...)
	for k, v := range envs {
		args = append(args, "-e", k+"="+v)
	}
	args = append(args, image, "action")
	cmd := exec.Command(docker[0], append(docker[1:], args...)...)
	start := time.Now()
	out, err = cmd.CombinedOutput()
	t.Logf("docker run: %s, %v\n%s", time.Since(start).Round(time.Millisecond), err, out)
	if err != nil {
		t.Fatalf("the step in %s failed: %v", image, err)
	}
	return out, run, fc
}

// testdataDir is e2e/testdata, where the scripted agent is.
func testdataDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// chownAll gives everything under root to uid (and its group).
func chownAll(t *testing.T, root string, uid int) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}
