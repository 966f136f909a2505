package agent

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEnviron(t *testing.T) {
	t.Parallel()
	const secret = "ghs_s3cr3t"
	tests := []struct {
		name    string
		base    []string
		secrets []string
		extra   map[string]string
		want    []string
	}{
		{
			name: "credential names removed",
			base: []string{
				"PATH=/bin", "GITHUB_TOKEN=a", "GH_TOKEN=b", "GH_ENTERPRISE_TOKEN=c", "GITHUB_ENTERPRISE_TOKEN=d",
				"INPUT_TOKEN=e", "INPUT_CONFIG=.github/ralph.yml", "ACTIONS_RUNTIME_TOKEN=f", "ACTIONS_RUNTIME_URL=g",
				"ACTIONS_ID_TOKEN_REQUEST_TOKEN=h", "ACTIONS_ID_TOKEN_REQUEST_URL=i", "github_token=j", "HOME=/root",
			},
			want: []string{"PATH=/bin", "HOME=/root"},
		},
		{
			name:    "secret under another name removed",
			base:    []string{"PATH=/bin", "COPY=" + secret, "URL=https://x:" + secret + "@host", "OTHER=fine"},
			secrets: []string{"", secret},
			want:    []string{"PATH=/bin", "OTHER=fine"},
		},
		{
			name:  "pass-through and set",
			base:  []string{"PATH=/bin", "ANTHROPIC_API_KEY=sk-user", "MODEL=old"},
			extra: map[string]string{"ANTHROPIC_API_KEY": "", "MODEL": "new", "NEW": "1", "ABSENT": ""},
			want:  []string{"PATH=/bin", "ANTHROPIC_API_KEY=sk-user", "MODEL=new", "NEW=1"},
		},
		{
			name:    "credentials never passed through or set",
			base:    []string{"GITHUB_TOKEN=" + secret, "GH_TOKEN=x", "COPY=" + secret, "INPUT_TOKEN=y"},
			secrets: []string{secret},
			extra:   map[string]string{"GITHUB_TOKEN": "", "GH_TOKEN": "literal", "COPY": "", "INPUT_TOKEN": "", "LEAK": "prefix-" + secret},
			want:    nil,
		},
		{
			name:  "malformed entries dropped",
			base:  []string{"NOEQUALS", "=bad", "OK=1"},
			extra: map[string]string{"BAD=KEY": "v"},
			want:  []string{"OK=1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Environ(tt.base, tt.secrets, tt.extra)
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Environ (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAgentNeverSeesCredentials runs a scripted agent that prints its whole
// environment, with Environ applied to an environment like the Action's.
func TestAgentNeverSeesCredentials(t *testing.T) {
	t.Parallel()
	const token = "ghs_ActionToken789"
	base := append(baseEnv(),
		"GITHUB_TOKEN="+token, "INPUT_TOKEN="+token, "GH_TOKEN="+token,
		"SNEAKY_COPY="+token, "ACTIONS_RUNTIME_TOKEN=rt", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=idt",
		"ANTHROPIC_API_KEY=sk-user", "GITHUB_REPOSITORY=o/r",
	)
	env := Environ(base, []string{token}, map[string]string{"ANTHROPIC_API_KEY": "", "AGENT_MODE": "fast"})
	var out bytes.Buffer
	inv := Invocation{Command: "plan", Issue: 1, Dir: t.TempDir(), Env: env, Output: &out, Timeout: time.Minute, Prompt: "p"}
	if _, err := (&Command{Shell: "env"}).Run(context.Background(), inv); err != nil {
		t.Fatal(err)
	}
	seen := out.String()
	for _, bad := range []string{token, "GITHUB_TOKEN=", "INPUT_TOKEN=", "GH_TOKEN=", "SNEAKY_COPY=", "ACTIONS_RUNTIME_TOKEN=", "ACTIONS_ID_TOKEN_REQUEST_TOKEN="} {
		if strings.Contains(seen, bad) {
			t.Errorf("agent environment contains %q", bad)
		}
	}
	for _, good := range []string{"ANTHROPIC_API_KEY=sk-user", "AGENT_MODE=fast", "GITHUB_REPOSITORY=o/r", "RALPH_COMMAND=plan"} {
		if !strings.Contains(seen, good) {
			t.Errorf("agent environment lacks %q", good)
		}
	}
}
