package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
)

// The agent of a step gets the step's caches, under its HOME.
func TestAgentGetsTheStepsCaches(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.Triage = true })
	h.agent.on("triage", writes("Thoughts.\n\n**DECISION: plan**\n"))
	n := h.enrolled("Parse widgets")
	h.advance(n)
	inv := h.agent.last()
	home := agent.Getenv(inv.Env, "HOME")
	if home == "" || agent.Getenv(inv.Env, "GOCACHE") != filepath.Join(home, ".cache", "go-build") || agent.Getenv(inv.Env, "npm_config_cache") != filepath.Join(home, ".npm") {
		t.Errorf("the agent's environment: %q", inv.Env)
	}
}

// In the Action, the step's Go build cache starts as a copy of the job's (ralph's GOCACHE), the agent's
// to write; off the Action (a person's cache holds their other projects), or when agent.env sets
// GOCACHE, nothing is copied.
func TestStepBuildCacheSeededFromTheJobs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		actions bool
		setEnv  bool
		copied  bool
	}{
		{"in the Action", true, false, true},
		{"off the Action", false, false, false},
		{"agent.env sets GOCACHE", true, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			job := filepath.Join(t.TempDir(), "go-build")
			if err := os.MkdirAll(filepath.Join(job, "ab"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(job, "ab", "ab12-d"), []byte("built by the job\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, func(c *config.Config) {
				c.Triage = true
				if tt.setEnv {
					c.Agent.Env = map[string]string{"GOCACHE": ""}
				}
			})
			h.eng.AgentEnv = append(h.eng.AgentEnv, "GOCACHE="+job)
			if tt.actions {
				h.eng.AgentEnv = append(h.eng.AgentEnv, "GITHUB_ACTIONS=true")
			}
			var seen string
			var writeErr error
			h.agent.on("triage", func(a *agentRun) (agent.Result, error) {
				home := agent.Getenv(a.inv.Env, "HOME")
				b, _ := os.ReadFile(filepath.Join(home, ".cache", "go-build", "ab", "ab12-d"))
				seen = string(b)
				if tt.copied {
					writeErr = os.WriteFile(filepath.Join(home, ".cache", "go-build", "ab", "ab34-d"), []byte("built by the step\n"), 0o644)
				}
				a.artifact("Thoughts.\n\n**DECISION: plan**\n")
				return ok()
			})
			n := h.enrolled("Parse widgets")
			h.advance(n)
			if want := map[bool]string{true: "built by the job\n"}[tt.copied]; seen != want {
				t.Errorf("the agent read %q in its GOCACHE, want %q", seen, want)
			}
			if writeErr != nil {
				t.Errorf("the agent could not write its copy of the job's cache: %v", writeErr)
			}
			if tt.copied && !h.log.has("the step's Go build cache starts from the job's") {
				t.Errorf("the log does not say the cache was seeded: %v", h.log.lines)
			}
			if b, err := os.ReadFile(filepath.Join(job, "ab", "ab12-d")); err != nil || string(b) != "built by the job\n" {
				t.Errorf("the job's cache changed: %q, %v", b, err)
			}
		})
	}
}
