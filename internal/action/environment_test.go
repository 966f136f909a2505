package action

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/sethvargo/go-githubactions"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/lock"
)

func getenvOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// What a runner sets, as a container action sees it.
var runnerEnv = map[string]string{
	"GITHUB_REPOSITORY": "octo/demo", "GITHUB_WORKSPACE": "/github/workspace", "GITHUB_EVENT_NAME": "issues",
	"GITHUB_EVENT_PATH": "/github/workflow/event.json", "GITHUB_RUN_ID": "1234", "GITHUB_RUN_ATTEMPT": "2",
	"GITHUB_ACTOR": "mona", "GITHUB_WORKFLOW_REF": "octo/demo/.github/workflows/ralph.yml@refs/heads/main",
	"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://ghe.example.com", "GITHUB_API_URL": "https://ghe.example.com/api/v3",
	"GITHUB_GRAPHQL_URL": "https://ghe.example.com/api/graphql", "RUNNER_TEMP": "/home/runner/work/_temp", "HOME": "/github/home",
	"USER": "runner", "GITHUB_ENV": "/f/env", "GITHUB_PATH": "/f/path", "GITHUB_OUTPUT": "/f/out", "GITHUB_STATE": "/f/state",
	"GITHUB_STEP_SUMMARY": "/f/summary", "RALPH_AGENT_WRITABLE": "/cache:/more", "RALPH_AGENT_DENY": "/secret", "RALPH_AGENT_READABLE": "/opt/sdk:/tools",
	"RALPH_TEST_CRASH_AT": "after-push",
	"INPUT_TOKEN":         " ghs_token\n", "INPUT_PROJECT_TOKEN": "ghp_project", "INPUT_COMMAND": "advance", "INPUT_ISSUE": "#7",
	"INPUT_CONFIG": "ci/ralph.yml", "INPUT_DRY_RUN": "true",
}

func TestReadEnvironment(t *testing.T) {
	t.Parallel()
	got := ReadEnvironment(getenvOf(runnerEnv))
	want := Environment{
		Repository: "octo/demo", Workspace: "/github/workspace", EventName: "issues", EventPath: "/github/workflow/event.json",
		RunID: 1234, RunAttempt: 2, Actor: "mona", WorkflowRef: "octo/demo/.github/workflows/ralph.yml@refs/heads/main",
		InActions:  true,
		Endpoints:  ghapi.Endpoints{API: "https://ghe.example.com/api/v3", GraphQL: "https://ghe.example.com/api/graphql", Server: "https://ghe.example.com"},
		RunnerTemp: "/home/runner/work/_temp", Home: "/github/home", User: "runner",
		Output: "/f/out", StepSummary: "/f/summary", FileCommands: []string{"/f/env", "/f/path", "/f/out", "/f/state", "/f/summary"},
		Writable: []string{"/cache", "/more"}, Deny: []string{"/secret"}, ReadOnly: []string{"/opt/sdk", "/tools"}, CrashAt: "after-push",
		Inputs: Inputs{Token: "ghs_token", ProjectToken: "ghp_project", Command: "advance", Issue: "#7", Config: "ci/ralph.yml", DryRun: "true"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
	// The inputs read as go-githubactions reads them.
	a := githubactions.New(githubactions.WithGetenv(getenvOf(runnerEnv)))
	for name, value := range map[string]string{"token": got.Inputs.Token, "project_token": got.Inputs.ProjectToken,
		"command": got.Inputs.Command, "issue": got.Inputs.Issue, "config": got.Inputs.Config, "dry_run": got.Inputs.DryRun} {
		if a.GetInput(name) != value {
			t.Errorf("input %s: %q, go-githubactions reads %q", name, value, a.GetInput(name))
		}
	}
}

// By hand (no Actions run), nothing is an Actions run: no run id, and the endpoints are github.com's.
func TestReadEnvironmentByHand(t *testing.T) {
	t.Parallel()
	got := ReadEnvironment(getenvOf(map[string]string{"GITHUB_RUN_ID": "not a number", "USER": "mona"}))
	if got.RunID != 0 || got.InActions || got.Endpoints.API != "https://api.github.com" || got.User != "mona" || len(got.Writable) != 0 {
		t.Errorf("environment by hand: %+v", got)
	}
}

// The Action's door: the Actions token pushes, the bot signs, this run (and attempt) holds the locks, the
// project_token input reaches the board, RALPH_TEST_CRASH_AT sets the checkpoint, the clock is the
// system's. By hand, a local holder and no run link.
// doorFuncs leaves out of a comparison what a Door holds that is not data.
var doorFuncs = cmpopts.IgnoreFields(compose.Door{}, "GitHub", "Config", "Log", "Transport", "Now", "Checkpoint")

func TestDoor(t *testing.T) {
	t.Parallel()
	gh, err := ghapi.New(ghapi.Options{Endpoints: ghapi.ForHost("github.com"), Token: "t", Owner: "octo", Repo: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &runner{a: workflowCommands{githubactions.New(githubactions.WithGetenv(getenvOf(runnerEnv)), githubactions.WithWriter(&out))},
		env: Env{Getenv: getenvOf(runnerEnv), Environ: []string{"PATH=/bin"}, Stdout: &out}, ev: ReadEnvironment(getenvOf(runnerEnv)), dryRun: true}
	d := r.door(gh, config.Default(), nil)
	if d.Checkpoint == nil || d.Now != nil || d.ProjectHint != "" {
		t.Errorf("checkpoint set %v, clock set %v, project hint %q", d.Checkpoint != nil, d.Now != nil, d.ProjectHint)
	}
	want := compose.Door{
		Token: "ghs_token", ProjectToken: "ghp_project", Checkout: "/github/workspace", PushAuth: git.Auth{Token: "ghs_token"},
		Writable: []string{"/cache", "/more"}, ReadOnly: []string{"/opt/sdk", "/tools"}, Environ: []string{"PATH=/bin"},
		Holder: lock.Holder{Kind: "actions", RunID: 1234, Attempt: 2, RunURL: "https://github.com/octo/demo/actions/runs/1234"},
		Origin: engine.Origin{URL: "https://github.com/octo/demo/actions/runs/1234", Label: "Actions run 1234"},
		Author: git.Signature{Name: "github-actions[bot]", Email: "41898282+github-actions[bot]@users.noreply.github.com"},
		// GitHub makes (and signs) ralph's commits.
		SignedCommits: true, Signing: engine.Signing{Signed: true, How: "made by GitHub through its API, which signs them"},
		DryRun: true,
	}
	got := d
	if diff := cmp.Diff(want, got, doorFuncs); diff != "" {
		t.Errorf("door (-want +got):\n%s", diff)
	}

	r.ev.RunID, r.ev.CrashAt = 0, ""
	d = r.door(gh, config.Default(), nil)
	if d.Holder.Kind != "local" || d.Holder.User != "runner" || d.Holder.PID == 0 || d.Origin != (engine.Origin{Label: "ralph"}) || d.Checkpoint != nil {
		t.Errorf("by hand: holder %+v, run %+v, checkpoint set %v", d.Holder, d.Origin, d.Checkpoint != nil)
	}
	if strings.Contains(out.String(), "stopping") {
		t.Errorf("the checkpoint ran while the door was built: %s", out.String())
	}
}
