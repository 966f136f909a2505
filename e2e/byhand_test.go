package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// byHand runs `gh-ralph action` as a person does from a clone, outside GitHub Actions: no GITHUB_ACTIONS,
// no GITHUB_OUTPUT, no GITHUB_STEP_SUMMARY, no event; only the variables the README's command sets (and
// where the test server is).
func (e *env) byHand(token string, vars ...string) result {
	e.t.Helper()
	work := filepath.Join(e.t.TempDir(), "work")
	e.git("", "clone", "-q", e.srv.BareRepo, work)
	cmd := exec.Command(binary, "action")
	cmd.Dir = work
	cmd.Env = append(e.gitEnv(), "GITHUB_REPOSITORY=octo/demo", "GITHUB_WORKSPACE="+work, "INPUT_TOKEN="+token,
		"GITHUB_API_URL="+e.srv.URL, "GITHUB_SERVER_URL="+e.srv.ServerURL, "GITHUB_GRAPHQL_URL="+e.srv.GraphQLURL,
		"RALPH_TEST_CONTROL="+e.control, "RALPH_AGENT_WRITABLE="+e.control, "RALPH_AGENT_READABLE="+agentReadable(e.t))
	for i, kv := range cmd.Env {
		for _, name := range []string{"GITHUB_ACTIONS=", "GITHUB_OUTPUT=", "GITHUB_STEP_SUMMARY=", "GITHUB_EVENT_PATH=", "GITHUB_EVENT_NAME="} {
			if strings.HasPrefix(kv, name) {
				cmd.Env[i] = "IGNORED_" + kv
			}
		}
	}
	cmd.Env = append(cmd.Env, vars...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	if testing.Verbose() {
		e.t.Logf("gh-ralph action by hand: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	return r
}

// The README's first command for a developer: the action run by hand, outside GitHub Actions. Its outputs
// go to standard output (there is no GITHUB_OUTPUT file to write), and a missing token says what to do and
// exits 4, as gh does.
func TestActionByHand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, baseConfig(t, ""))
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)

	r := e.byHand("test-token", "INPUT_ISSUE="+itoa(n), "INPUT_DRY_RUN=true")
	if r.exit != 0 || strings.Contains(r.stderr, "panic") {
		t.Fatalf("exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	for _, want := range []string{"\nissue=1\n", "\nstep=research\n", "\nfrom_state=research-needed\n", "\npaused=false\n", "\ncost=0\n", "\ntokens=0\n"} {
		if !strings.Contains("\n"+r.stdout, want) {
			t.Errorf("stdout has no output line %q:\n%s", strings.TrimSpace(want), r.stdout)
		}
	}
	e.untouched(n)

	r = e.byHand("", "INPUT_ISSUE="+itoa(n), "INPUT_DRY_RUN=true")
	if r.exit != 4 {
		t.Errorf("without a token: exit %d, want 4\n%s%s", r.exit, r.stdout, r.stderr)
	}
	for _, want := range []string{"INPUT_TOKEN is empty", "INPUT_TOKEN=$(gh auth token)", "please run:  gh auth login"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("without a token, the message has no %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "${{ github.token }}") {
		t.Errorf("outside Actions, the message speaks to workflow authors:\n%s", r.stdout)
	}
}
