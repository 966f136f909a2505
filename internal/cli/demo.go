package cli

import (
	"github.com/spf13/cobra"
)

// NewCmdDemo builds `gh ralph demo`.
func NewCmdDemo(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Take one issue from its label to a pull request against a GitHub of ralph's own",
		Long: `Run ralph's whole workflow once, here, with nothing of yours: a GitHub served in this process
(a repository in a temporary directory), an issue labeled ralph:build, and a scripted agent in place
of Claude Code, Codex or Gemini. ralph runs each step as a workflow run would (research, plan,
review, implement, self-review, pull request), through the same engine, agent boundary and git,
and then prints what a person sees on GitHub: the labels, the status comment, the documents and the
pull request. Everything is removed when it ends.

It needs git, and no gh login, no repository of yours, no network and no model key. To connect a
repository of yours next, run gh ralph init in a clone of it.`,
		Example: `  $ gh ralph demo`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return demoRun(cmd.Context(), f)
		},
	}
}

// termWriter writes ralph's log lines through the terminal's log (made harmless to it, below its status
// line).
type termWriter struct{ l *termLog }

func (w termWriter) Write(p []byte) (int, error) { return w.l.Output().Write(p) }
