package action

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
)

// Environment is what GitHub Actions tells the action through its environment, read once
// (ReadEnvironment) so that the rest of the action reads fields, not variables.
type Environment struct {
	Repository  string // GITHUB_REPOSITORY, owner/name
	Workspace   string // GITHUB_WORKSPACE, the checkout
	EventName   string // GITHUB_EVENT_NAME
	EventPath   string // GITHUB_EVENT_PATH
	RunID       int64  // GITHUB_RUN_ID; 0 outside Actions
	RunAttempt  int    // GITHUB_RUN_ATTEMPT
	Actor       string // GITHUB_ACTOR
	WorkflowRef string // GITHUB_WORKFLOW_REF, owner/name/.github/workflows/file.yml@ref
	// InActions is GITHUB_ACTIONS=true: the action runs on a runner, not by hand.
	InActions bool
	// Endpoints are GitHub's (GITHUB_SERVER_URL, GITHUB_API_URL, GITHUB_GRAPHQL_URL).
	Endpoints  ghapi.Endpoints
	RunnerTemp string // RUNNER_TEMP
	Home       string // HOME
	User       string // USER
	// Output and StepSummary are the file commands the action writes (GITHUB_OUTPUT,
	// GITHUB_STEP_SUMMARY); FileCommands are all the runner's, those two among them, which the agent
	// must not reach.
	Output, StepSummary string
	FileCommands        []string
	// Writable and Deny are RALPH_AGENT_WRITABLE and RALPH_AGENT_DENY: more directories the agent may
	// write, and more paths that must be closed to it.
	Writable, Deny []string
	// ReadOnly is RALPH_AGENT_READABLE: more paths the agent may read and run but not write.
	ReadOnly []string
	// CrashAt is RALPH_TEST_CRASH_AT, the end-to-end tests' seam (see Run).
	CrashAt string
	// LimitWait is RALPH_TEST_LIMIT_WAIT (a Go duration), the end-to-end tests' seam: how long a request
	// waits for GitHub's rate limits, instead of ghapi.LimitWait; 0: that.
	LimitWait time.Duration
	Inputs    Inputs
}

// Inputs are the action's inputs (INPUT_*), trimmed as go-githubactions' GetInput trims them.
type Inputs struct {
	Token, ProjectToken, Command, Issue, Config, DryRun string
}

// ReadEnvironment reads the environment through getenv.
func ReadEnvironment(getenv func(string) string) Environment {
	input := func(name string) string { return strings.TrimSpace(getenv("INPUT_" + strings.ToUpper(name))) }
	e := Environment{
		Repository:  getenv("GITHUB_REPOSITORY"),
		Workspace:   getenv("GITHUB_WORKSPACE"),
		EventName:   getenv("GITHUB_EVENT_NAME"),
		EventPath:   getenv("GITHUB_EVENT_PATH"),
		Actor:       getenv("GITHUB_ACTOR"),
		WorkflowRef: getenv("GITHUB_WORKFLOW_REF"),
		InActions:   getenv("GITHUB_ACTIONS") == "true",
		Endpoints:   ghapi.EndpointsFromEnv(getenv),
		RunnerTemp:  getenv("RUNNER_TEMP"),
		Home:        getenv("HOME"),
		User:        getenv("USER"),
		Output:      getenv("GITHUB_OUTPUT"),
		StepSummary: getenv("GITHUB_STEP_SUMMARY"),
		Writable:    filepath.SplitList(getenv("RALPH_AGENT_WRITABLE")),
		Deny:        filepath.SplitList(getenv("RALPH_AGENT_DENY")),
		ReadOnly:    filepath.SplitList(getenv("RALPH_AGENT_READABLE")),
		CrashAt:     getenv("RALPH_TEST_CRASH_AT"),
		Inputs: Inputs{
			Token: input("token"), ProjectToken: input("project_token"), Command: input("command"),
			Issue: input("issue"), Config: input("config"), DryRun: input("dry_run"),
		},
	}
	for _, k := range []string{"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"} {
		e.FileCommands = append(e.FileCommands, getenv(k))
	}
	// Unset or not a number: not an Actions run (a local holder, no run link).
	e.RunID, _ = strconv.ParseInt(getenv("GITHUB_RUN_ID"), 10, 64)
	e.RunAttempt, _ = strconv.Atoi(getenv("GITHUB_RUN_ATTEMPT"))
	if d, err := time.ParseDuration(getenv("RALPH_TEST_LIMIT_WAIT")); err == nil && d > 0 {
		e.LimitWait = d
	}
	return e
}
