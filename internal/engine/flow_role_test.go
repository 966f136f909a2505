package engine_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// TestFlowEnrollerRoleReadWithTheIssue: the run that enrolls an issue learns the enroller's role with the
// issue it reads anyway; a role GitHub names as write or above needs no permission request, and anything
// else (no role said, triage, a bot) is asked of the authorizer as before, which may refuse.
func TestFlowEnrollerRoleReadWithTheIssue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		login, role string
		allowed     bool // the authorizer's answer
		asked       bool // the authorizer is asked
		enrolled    bool
	}{
		{"alice", "write", false, false, true},
		{"olga", "admin", false, false, true},
		{"max", "maintain", false, false, true},
		{"trish", "triage", false, true, false},
		{"pat", "", true, true, true},
		{"mallory", "", false, true, false},
		{"helper[bot]", "write", false, true, false}, // a bot's word is the config's allowed_bots
	} {
		t.Run(tt.login, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			if tt.role != "" {
				h.hub.srv.SetPermission(tt.login, tt.role)
			}
			auth := &fakeAuth{allowed: map[string]bool{tt.login: tt.allowed}}
			h.eng.Auth = auth
			n := h.enrolled("Parse widgets")
			res, err := h.eng.Enroll(context.Background(), n, tt.login)
			var refused *engine.RefusedError
			switch {
			case tt.enrolled && (err != nil || res.Step != workflow.Research):
				t.Errorf("Enroll = %+v, %v; want the research step", res, err)
			case !tt.enrolled && !errors.As(err, &refused):
				t.Errorf("Enroll = %+v, %v; want refused", res, err)
			}
			if got := slices.Contains(auth.asked, tt.login); got != tt.asked {
				t.Errorf("the authorizer was asked about %s: %v, want %v (asked %v)", tt.login, got, tt.asked, auth.asked)
			}
			if asked := h.hub.readWithRoleOf(); !slices.Contains(asked, tt.login) {
				t.Errorf("the issue was not read with %s's role: %v", tt.login, asked)
			}
			if !tt.enrolled && len(h.agent.commands()) != 0 {
				t.Errorf("a refused enrollment ran the agent: %v", h.agent.commands())
			}
		})
	}
}
