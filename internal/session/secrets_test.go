package session

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

func TestSecrets(t *testing.T) {
	t.Parallel()
	s := New(Options{
		SecretNames: []string{"ghs_token_value", ""},
		BaseEnv:     []string{"MODEL_KEY=sk-model-123456", "SHORT=abc", "PLAIN=not-passed-through"},
		Config:      config.Config{Agent: config.Agent{Env: map[string]string{"MODEL_KEY": "", "SHORT": "", "LITERAL": "written-in-the-config"}}},
	})
	text := "a ghs_token_value, sk-model-123456, abc, not-passed-through and written-in-the-config"
	if diff := cmp.Diff([]string{"MODEL_KEY", "ralph's GitHub token"}, s.Leaks(text)); diff != "" {
		t.Errorf("leaks (-want +got):\n%s", diff)
	}
	if got, want := s.Redact(text), "a ***, ***, abc, not-passed-through and written-in-the-config"; got != want {
		t.Errorf("redact = %q, want %q", got, want)
	}
	if got := s.Leaks("nothing here"); len(got) != 0 {
		t.Errorf("leaks of clean text = %v", got)
	}
}
