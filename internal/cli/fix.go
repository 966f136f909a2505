package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/engine"
)

// FixOptions are `gh ralph fix`'s.
type FixOptions struct {
	Repo    string
	Issue   int
	Text    string // what to change, in the person's words; may be empty
	Advance bool
}

// NewCmdFix builds `gh ralph fix N [text] [--text T] [--advance]`.
func NewCmdFix(f *Factory, runF func(context.Context, *FixOptions) error) *cobra.Command {
	opts := &FixOptions{}
	cmd := &cobra.Command{
		Use:   "fix <issue> [text]",
		Short: "Ask ralph to work on its pull request's review (or failing checks) again",
		Long: `Ask ralph to change its open pull request for an issue in In Review, as the comment
/ralph fix [text] does on the issue or the pull request. The issue moves back to In Progress with a
fix phase whose prompt carries every unresolved review thread of the pull request (file, line, the
diff hunk, the comments in order) and your text; the phase is pushed to the same branch, ralph
replies on the threads it addressed and asks the reviewers to look again, and the issue returns to
In Review on the same pull request.

A review that requests changes, from someone with write access, does the same by itself, as do
failing checks on ralph's last commit (at most ci.max_fixes rounds per pull request). Only people
with write, maintain or admin permission can ask for a fix. Your text is quoted to the agent as
data. Give it as the arguments after the issue number or with --text, not both.`,
		Example: `  $ gh ralph fix 47
  $ gh ralph fix 47 keep the old flag as an alias
  $ gh ralph fix 47 --text "the error message should name the file" --advance`,
		Args:              fixArgs,
		ValidArgsFunction: issueCompletion(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Issue, _ = parseIssue(args[0])
			opts.Repo, _ = cmd.Flags().GetString("repo")
			if rest := strings.TrimSpace(strings.Join(args[1:], " ")); rest != "" {
				if cmd.Flags().Changed("text") {
					return flagErrorf(cmd, "give the text as arguments or with --text, not both")
				}
				opts.Text = rest
			}
			opts.Text = strings.TrimSpace(opts.Text)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return personRun(cmd.Context(), f, opts.Repo, engine.Request{Action: engine.ActFix, Issue: opts.Issue, Reason: opts.Text, CommandOnly: !opts.Advance, Terminal: true})
		},
	}
	cmd.Flags().StringVarP(&opts.Text, "text", "t", "", "What to change, in your words (quoted to the agent as data)")
	cmd.Flags().BoolVar(&opts.Advance, "advance", false, advanceHelp)
	addRepoFlag(cmd)
	return cmd
}

// fixArgs: an issue number, then optional words of text.
func fixArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return flagErrorf(cmd, "an issue number is required")
	}
	return issueArg(cmd, args[:1])
}
