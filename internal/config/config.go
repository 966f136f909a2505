// Package config reads a repository's ralph settings from .github/ralph.yml.
//
// Decoding is strict so that a typo never silently falls back to a default:
// every key must be known, every value must have the right type and range,
// and every problem is reported as an *Error naming the file, line, column
// and dotted key (for example "agent.timeout" or "verify[1]"), all of a
// file's problems at once, in line order ([Errors]).
//
// Values left out of the file keep the values of [Default]. A list or map in
// the file replaces the default one whole; an empty value (`verify:` with
// nothing after it) is an empty list or map, and an empty string setting is
// "". A boolean, number or choice with no value is an error.
//
// # Protected paths
//
// protected_paths holds glob patterns matched against whole repository-relative
// paths with "/" separators, segment by segment:
//
//   - "*" matches any run of characters within one segment (not "/"),
//   - "?" matches one character within a segment,
//   - "[...]" is a character class, as in [path.Match],
//   - "**" as a whole segment matches any number of segments, including none,
//     so "dir/**" covers dir and everything under it and "**/*.pem" matches a
//     .pem file at any depth. Anywhere else "**" is just two "*".
//
// A pattern is never matched against a bare file name: "*.pem" matches only
// .pem files at the top of the repository. Dot files get no special treatment.
package config

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/preset"
)

// DefaultPath is where the config lives in a repository.
const DefaultPath = ".github/ralph.yml"

// ReviewMode says how a plan is reviewed.
type ReviewMode string

const (
	// ReviewSkip approves every plan at once, with no agent.
	ReviewSkip ReviewMode = "skip"
	// ReviewAuto runs the agent as a critic of the plan.
	ReviewAuto ReviewMode = "auto"
	// ReviewInteractive waits for a person to approve or reject.
	ReviewInteractive ReviewMode = "interactive"
)

// DocumentsMode says where the research, plan and review documents are committed.
type DocumentsMode string

const (
	// DocumentsBranch commits them on the branch, so they are in the pull request and land with
	// the merge.
	DocumentsBranch DocumentsMode = "branch"
	// DocumentsSeparate commits them on a branch of ralph's own beside the (<branch_prefix>docs/<N>),
	// linked from the issue and the pull request: the pull request holds only the code.
	DocumentsSeparate DocumentsMode = "separate"
)

// Config is the decoded .github/ralph.yml. See SPEC §5 for what each setting
// does; the YAML key of each field is given beside it.
type Config struct {
	Review     ReviewMode // review
	Triage     bool       // triage
	Research   bool       // research
	SelfReview bool       // self_review
	// SecurityReview: the agent reviews the branch's diff for security before the pull request opens.
	SecurityReview bool // security_review
	// MaxIterations bounds plan and self-review send-backs before Human
	// Needed; at least 1.
	MaxIterations int // max_iterations
	// MaxFailures bounds consecutive failures of one step before Human
	// Needed; at least 1.
	MaxFailures int // max_failures
	// MaxPhases bounds the phases of one plan: each is an implement run of the agent, a commit and a line of
	// the record, so a plan with more goes to a person; at least 1.
	MaxPhases int // max_phases
	// BaseBranch is the pull request's base; "" means the repository's
	// default branch.
	BaseBranch   string // base_branch
	BranchPrefix string // branch_prefix, e.g. "ralph/"
	DraftPR      bool   // draft_pr
	// Documents is where the documents are committed: on the branch, or on ralph's documents
	// branch beside it.
	Documents DocumentsMode // documents
	Chain     bool          // chain
	// Workflow is the file name in .github/workflows of the workflow the chain dispatches (its
	// workflow_dispatch has an issue input); "": the one that started the run when it can be dispatched,
	// else the repository's workflow that runs ralph and can be.
	Workflow string // workflow
	// ProtectedPaths are glob patterns of paths a step may not change; see
	// the package documentation for the syntax and [Config.Protected].
	// ralph's own files ([RalphPaths], and File) are protected besides,
	// whatever this list says.
	ProtectedPaths []string // protected_paths
	// File is the repository-relative path the config was read from when
	// it is not [DefaultPath] (the action's config input); not a setting.
	File string
	// Verify are shell commands run in the worktree after each phase; all
	// must pass. Empty by default.
	Verify []string // verify
	Agent  Agent    // agent
	Sweep  Sweep    // sweep
	Split  Split    // split
	CI     CI       // ci
	// AllowedBots are bot accounts (logins ending in [bot]) that may enroll, approve, reject and retry like
	// a person with write permission. Every other bot is refused. Empty by default.
	AllowedBots []string // allowed_bots
	// LockLease is how long an issue's lock holds without renewal; a run renews it every third of that while
	// it works, and another run may take over a lock whose lease has expired.
	LockLease time.Duration // lock_lease
	// Project mirrors each issue's state on a GitHub Projects (V2) board; nil when not configured.
	Project *Project // project
	// Gateway is ralph's model gateway (gateway.go).
	Gateway Gateway // gateway
	// Budget bounds what an issue, and the repository in a day, spend on the model.
	Budget Budget // budget
	// Network is what the agent may reach besides the gateway (network.go).
	Network Network // network
}

// Agent is the agent: section.
type Agent struct {
	// Preset is one of package preset's, or command.
	Preset string // preset
	// Command is the program line for preset command; it is required then.
	Command string // command
	// Timeout bounds one agent run; more than zero.
	Timeout time.Duration // timeout, a Go duration such as "30m" or "1h30m"
	// Env is extra environment for the agent. A name with a non-empty value
	// sets that value. A name with an empty value passes through the
	// variable of that name from ralph's own environment, which is how a
	// secret reaches the agent without being written in the file. ralph's
	// GitHub token names are refused: the agent never sees a credential.
	Env map[string]string // env
	// Model is the model the CLI of a preset uses ("" = the CLI's default).
	Model string // model
	// MaxTurns bounds the model turns of one agent run (0 = no limit). A run that reaches it keeps what it
	// produced: the step's postcondition decides.
	MaxTurns int // max_turns
	// Args are extra arguments for the CLI of a preset, after the preset's own.
	Args []string // args
	// MaxCost bounds the cost in US dollars of one agent run (0 = no limit): as ralph's model gateway
	// metered it, or, without the gateway, as Claude Code reports it (the only CLI that does).
	MaxCost float64 // max_cost
	// MaxTokens bounds the tokens (input and output) of one agent run, as the gateway meters them (0 = no
	// limit).
	MaxTokens int // max_tokens
	// Landlock is whether the kernel's Landlock must confine the agent's writes: "auto" (the default) uses
	// it where the kernel has it and says so in the log; "required" makes a kernel without it an error,
	// reported before the issue is touched.
	Landlock string // landlock
}

// The values of agent.landlock.
const (
	LandlockAuto     = "auto"
	LandlockRequired = "required"
)

// Sweep is the sweep: section.
type Sweep struct {
	Max    int  // max: issues one sweep advances; at least 1
	Matrix bool // matrix: only output the issues, for a matrix job
}

// Split is the split: section: what one triage that splits an issue may do.
type Split struct {
	// Max bounds the sub-issues one split creates (each is enrolled and runs the whole workflow); a triage
	// asking for more goes to a person and creates nothing. At least 2.
	Max int // max
	// Approve makes every split wait for a person's `/ralph approve` before any sub-issue is created.
	Approve bool // approve
}

// CI is the ci: section: how ralph answers checks that fail on its pull request.
type CI struct {
	// MaxFixes bounds the rounds of fixing failing checks per pull request; past it, the issue goes to a
	// person with the failing checks linked. 0 never fixes them. Default 2.
	MaxFixes int // max_fixes
}

// Default returns the settings used for everything a file leaves out, and
// for a repository with no file. Each call returns fresh slices and maps.
func Default() Config {
	return Config{
		Review:         ReviewAuto,
		Triage:         false,
		Research:       true,
		SelfReview:     true,
		MaxIterations:  3,
		MaxFailures:    2,
		MaxPhases:      20,
		BaseBranch:     "",
		BranchPrefix:   "ralph/",
		DraftPR:        false,
		Documents:      DocumentsBranch,
		Chain:          true,
		ProtectedPaths: slices.Clone(DefaultProtectedPaths),
		LockLease:      60 * time.Minute,
		// The SPEC's `go test ./...` is an example: a default command would
		// fail in every repository that is not a Go module.
		Verify: []string{},
		Agent: Agent{
			Preset:   "claude",
			Command:  "",
			Timeout:  30 * time.Minute,
			Landlock: LandlockAuto,
			Env:      map[string]string{},
			Args:     []string{},
		},
		Sweep:   Sweep{Max: 5, Matrix: false},
		Split:   Split{Max: 5, Approve: false},
		CI:      CI{MaxFixes: 2},
		Gateway: Gateway{Enabled: true, Prices: map[string]Price{}},
		Network: Network{Mode: NetworkAllowlist, Allow: []string{}},
	}
}

// Error is a problem in a config file. Line and Column are 1-based, 0 when
// unknown. Key is the dotted path of the setting ("agent.timeout",
// "verify[1]", "agent.env.TOKEN"), "" for a YAML syntax error.
type Error struct {
	File   string
	Line   int
	Column int
	Key    string
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// DefaultProtectedPaths are the files that run code on people's machines, or in the repository's CI, as
// soon as they are checked out, opened or committed to: GitHub's workflows and actions, the agents' own
// configuration (an MCP server is a program), editor and container tasks, and git hook managers. A
// protected_paths in the config replaces the whole list.
var DefaultProtectedPaths = []string{
	".github/workflows/**", ".github/actions/**",
	".claude/**", ".gemini/**", ".codex/**", ".cursor/**", ".mcp.json",
	".vscode/**", ".devcontainer/**", ".devcontainer.json",
	".husky/**", ".githooks/**", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml",
}

// RalphPaths are ralph's own files in a repository: its config and its prompt templates. A step may never
// change them, whatever protected_paths says: a run reads them from its checkout, which for a pull request's
// events (a review, a merge) is the pull request's merge with ralph's branch, where the agent's work is.
var RalphPaths = []string{DefaultPath, ".github/ralph/**"}

// Why a path is protected (Config.ProtectedBy).
const (
	ByRalph          = "ralph's own configuration"
	ByProtectedPaths = "protected_paths"
	ByAgent          = "the agent's configuration"
)

// agentPaths are the paths the preset of agent.preset reads as its configuration (preset.Preset's
// ConfigPaths): like RalphPaths, a step may never change them while that preset runs.
func (c Config) agentPaths() []string {
	p, ok := preset.Lookup(c.Agent.Preset)
	if !ok {
		return nil
	}
	return p.ConfigPaths
}

// ralphPaths is RalphPaths, and File where the config was read from another file.
func (c Config) ralphPaths() []string {
	own := RalphPaths
	if f := cleanPath(c.File); f != "" && f != DefaultPath {
		own = append(slices.Clone(own), f)
	}
	return own
}

// AllProtected is every pattern a step may not change: ralph's own files, then c.ProtectedPaths, then the
// agent's configuration.
func (c Config) AllProtected() []string {
	all := slices.Clone(c.ralphPaths())
	for _, p := range slices.Concat(c.ProtectedPaths, c.agentPaths()) {
		if !slices.Contains(all, p) {
			all = append(all, p)
		}
	}
	return all
}

func cleanPath(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }

// Protected reports whether p, a slash-separated path relative to the
// repository root, is one a step may not change: one of ralph's own files,
// or a match of c.ProtectedPaths. p is cleaned first, so
// "./.github//workflows/x.yml" is caught like ".github/workflows/x.yml".
func (c Config) Protected(p string) bool { return c.ProtectedBy(p) != "" }

// ProtectedBy says why p may not be changed (ByRalph, ByProtectedPaths or ByAgent), or "" when it may.
func (c Config) ProtectedBy(p string) string {
	p = cleanPath(p)
	if p == "" {
		return ""
	}
	name := strings.Split(p, "/")
	for _, set := range []struct {
		why      string
		patterns []string
	}{{ByRalph, c.ralphPaths()}, {ByProtectedPaths, c.ProtectedPaths}, {ByAgent, c.agentPaths()}} {
		for _, pattern := range set.patterns {
			if matchSegments(strings.Split(pattern, "/"), name) {
				return set.why
			}
		}
	}
	return ""
}

// matchSegments matches pattern segments against path segments. "**" makes a
// naive recursion exponential in the number of "**", so this fills a table
// instead: ok[i][j] says whether pattern[i:] matches name[j:].
func matchSegments(pattern, name []string) bool {
	ok := make([][]bool, len(pattern)+1)
	for i := range ok {
		ok[i] = make([]bool, len(name)+1)
	}
	ok[len(pattern)][len(name)] = true
	for i := len(pattern) - 1; i >= 0; i-- {
		for j := len(name); j >= 0; j-- {
			if pattern[i] == "**" {
				// Match no segment, or swallow one and stay on "**".
				ok[i][j] = ok[i+1][j] || (j < len(name) && ok[i][j+1])
				continue
			}
			if j == len(name) {
				continue
			}
			// Patterns are checked when the config is parsed, so an error
			// here is a pattern that never came through Parse; it matches
			// nothing.
			m, err := path.Match(pattern[i], name[j])
			ok[i][j] = err == nil && m && ok[i+1][j+1]
		}
	}
	return ok[0][0]
}

// checkPattern says what is wrong with a protected_paths pattern, or "".
func checkPattern(pattern string) string {
	if pattern == "" {
		return "must not be empty"
	}
	if strings.HasPrefix(pattern, "/") {
		return "must be relative to the repository root, without a leading /"
	}
	for _, seg := range strings.Split(pattern, "/") {
		switch seg {
		case "":
			return "must not contain an empty segment (// or a trailing /); use dir/** for everything under dir"
		case ".", "..":
			return fmt.Sprintf("must not contain a %q segment: paths are matched as written from the repository root", seg)
		}
		// path.Match checks the whole pattern for syntax, whatever the name.
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Sprintf("is not a valid glob: bad pattern in %q (check its [...] classes and \\ escapes)", seg)
		}
	}
	return ""
}
