package engine_test

import (
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
