package agent

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
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
			name: "only the allowlist of ralph's environment",
			base: []string{
				"PATH=/bin", "GITHUB_TOKEN=a", "GH_TOKEN=b", "GH_ENTERPRISE_TOKEN=c", "GITHUB_ENTERPRISE_TOKEN=d",
				"INPUT_TOKEN=e", "INPUT_CONFIG=.github/ralph.yml", "ACTIONS_RUNTIME_TOKEN=f", "ACTIONS_RUNTIME_URL=g",
				"ACTIONS_ID_TOKEN_REQUEST_TOKEN=h", "ACTIONS_ID_TOKEN_REQUEST_URL=i", "github_token=j", "HOME=/root",
				"GITHUB_ENV=/github/file_commands/set_env", "GITHUB_PATH=/github/file_commands/add_path",
				"GITHUB_OUTPUT=/o", "GITHUB_STATE=/s", "GITHUB_STEP_SUMMARY=/ss", "RUNNER_TEMP=/github/runner_temp",
				"GITHUB_WORKSPACE=/github/workspace", "LANG=C.UTF-8", "LC_CTYPE=C.UTF-8", "TERM=xterm", "OTHER=x",
			},
			want: []string{"PATH=/bin", "LANG=C.UTF-8", "LC_CTYPE=C.UTF-8", "TERM=xterm"},
		},
		{
			name:  "agent.env cannot name the runner's channels",
			base:  []string{"GITHUB_ENV=/f", "GITHUB_PATH=/p", "GITHUB_OUTPUT=/o", "ACTIONS_CACHE_URL=u", "INPUT_X=1"},
			extra: map[string]string{"GITHUB_ENV": "", "GITHUB_PATH": "", "GITHUB_OUTPUT": "/x", "ACTIONS_CACHE_URL": "", "INPUT_X": ""},
			want:  nil,
		},
		{
			name:    "secret under another name removed",
			base:    []string{"PATH=/bin", "COPY=" + secret, "HTTPS_PROXY=https://x:" + secret + "@host", "LANG=fine"},
			secrets: []string{"", secret},
			extra:   map[string]string{"COPY": ""},
			want:    []string{"PATH=/bin", "LANG=fine"},
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
			base:  []string{"NOEQUALS", "=bad", "TZ=UTC"},
			extra: map[string]string{"BAD=KEY": "v"},
			want:  []string{"TZ=UTC"},
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
	for _, bad := range []string{token, "GITHUB_TOKEN=", "INPUT_TOKEN=", "GH_TOKEN=", "SNEAKY_COPY=", "ACTIONS_RUNTIME_TOKEN=", "ACTIONS_ID_TOKEN_REQUEST_TOKEN=", "GITHUB_REPOSITORY="} {
		if strings.Contains(seen, bad) {
			t.Errorf("agent environment contains %q", bad)
		}
	}
	for _, good := range []string{"ANTHROPIC_API_KEY=sk-user", "AGENT_MODE=fast", "RALPH_COMMAND=plan"} {
		if !strings.Contains(seen, good) {
			t.Errorf("agent environment lacks %q", good)
		}
	}
}

func TestMissing(t *testing.T) {
	t.Parallel()
	base := []string{"ANTHROPIC_API_KEY=sk", "EMPTY=", "PATH=/bin"}
	extra := map[string]string{"ANTHROPIC_API_KEY": "", "EMPTY": "", "ABSENT": "", "SET": "literal", "GITHUB_TOKEN": ""}
	if diff := cmp.Diff([]string{"ABSENT", "EMPTY"}, Missing(base, extra)); diff != "" {
		t.Errorf("Missing (-want +got):\n%s", diff)
	}
}

// The config refuses in agent.env exactly the credentials the agent's environment never carries: both
// read config.CredentialNames, so a name added there is refused by one and dropped by the other.
func TestCredentialNamesOneList(t *testing.T) {
	t.Parallel()
	for _, name := range config.CredentialNames {
		if !Forbidden(name) || !Forbidden(strings.ToLower(name)) {
			t.Errorf("Forbidden(%q) = false: the agent's environment would carry a credential", name)
		}
		if env := Environ([]string{name + "=v"}, nil, map[string]string{name: ""}); len(env) != 0 {
			t.Errorf("agent.env passed %s through: %v", name, env)
		}
		_, err := config.Parse(".github/ralph.yml", []byte("agent:\n  env:\n    "+name+": \"\"\n"))
		var cerr *config.Error
		if !errors.As(err, &cerr) || cerr.Key != "agent.env."+name {
			t.Errorf("agent.env naming %s: got %v, want the config to refuse it", name, err)
		}
	}
}

// With the allow-list the agent has ralph's proxy, and no other: the runner's proxy (which ralph's proxy
// chains to) and a SOCKS proxy are not passed, and loopback, where the model gateway is, is not proxied.
func TestWithProxy(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "HTTPS_PROXY=http://corp:3128", "http_proxy=http://corp:3128", "ALL_PROXY=socks5://corp:1080", "NO_PROXY=internal", "HOME=/h"}
	got := WithProxy(env, "http://127.0.0.1:4000")
	want := []string{"PATH=/bin", "HOME=/h",
		"HTTP_PROXY=http://127.0.0.1:4000", "HTTPS_PROXY=http://127.0.0.1:4000", "http_proxy=http://127.0.0.1:4000", "https_proxy=http://127.0.0.1:4000",
		"NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1", "NODE_USE_ENV_PROXY=1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WithProxy (-want +got):\n%s", diff)
	}
}
