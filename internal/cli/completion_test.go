package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Each shell's completion help says how to install its script, and each script (with descriptions or
// without) hooks gh's completion and asks gh ralph for the words after ralph. The e2e tests run the shells.
func TestCompletionShells(t *testing.T) {
	t.Parallel()
	tests := []struct {
		shell   string
		install string // what the help says to run
		hook    string // the script's hook on gh's completion
	}{
		{"bash", "source <(gh ralph completion bash)", "complete -o default -F __gh_ralph_gh gh"},
		{"zsh", "source <(gh ralph completion zsh)", "compdef _gh_ralph_gh gh"},
		{"fish", "gh ralph completion fish | source", "complete -c gh -n '__gh_ralph_on_gh;"},
	}
	for _, tt := range tests {
		for _, args := range [][]string{{"completion", tt.shell, "--help"}, {"completion", tt.shell}, {"completion", tt.shell, "--no-descriptions"}} {
			var out bytes.Buffer
			root := NewCmdRoot(&Factory{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard})
			root.SetOut(&out)
			root.SetArgs(args)
			if err := root.Execute(); err != nil {
				t.Fatalf("%s: %v", strings.Join(args, " "), err)
			}
			want := tt.hook
			if args[len(args)-1] == "--help" {
				want = tt.install
			}
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s does not say %q:\n%s", strings.Join(args, " "), want, out.String())
			}
		}
	}
}
