package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// issueCompletion completes an issue number with the repository's open issues that carry ralph:build
// (all open issues for enroll), "47\tAdd a greeting" as gh completes its own. It completes only the first
// argument, and nothing when GitHub cannot be asked.
func issueCompletion(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		repo, _ := cmd.Flags().GetString("repo")
		s, err := f.session(repo)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		filter := ghapi.IssueFilter{State: "open", Labels: []string{workflow.LabelBuild}}
		if cmd.Name() == "enroll" {
			filter.Labels = nil
		}
		issues, err := s.gh.Issues(cmd.Context(), filter)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, is := range issues {
			if is.IsPull() {
				continue
			}
			n := fmt.Sprint(is.Number)
			if strings.HasPrefix(n, strings.TrimPrefix(toComplete, "#")) {
				out = append(out, n+"\t"+is.Title)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
