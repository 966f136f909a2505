package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

// completionHelp is `gh ralph completion`'s help: gh passes no completion on to its extensions, so the
// bash script hooks gh's own.
const completionHelp = `Print a shell completion script for gh ralph's commands, flags, states and issue numbers.

gh does not ask its extensions what to complete, so gh's own completion stops at "gh ralph".
The bash script completes "gh ralph …" itself: it hooks the completion of gh (gh completion -s bash,
or the one your system installed), asks gh ralph through gh (gh ralph __complete …) when the second
word is ralph, and leaves every other gh command to gh's own. It also completes the gh-ralph binary.
It needs the bash-completion package, as gh's own does.

  # this shell
  $ source <(gh ralph completion bash)

  # every new shell: after gh's completion is set up in ~/.bashrc
  $ echo 'source <(gh ralph completion bash)' >> ~/.bashrc

The zsh, fish and powershell scripts complete the gh-ralph binary only (gh-ralph adv<TAB>), not
"gh ralph …".`

// bashHook makes the bash script of the gh-ralph binary complete `gh ralph …` too: it is appended to
// cobra's script, whose request line is rewritten to ask `gh ralph __complete` when the words are gh's.
const bashHook = `
# gh ralph: gh does not pass completion on to its extensions. This takes over gh's completion
# (loading it first, as bash-completion would on gh's first <TAB>), completes "gh ralph …" with
# __start_gh-ralph above and hands every other gh command to gh's own completion function.
__gh_ralph_gh_prev=$(complete -p gh 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
if [[ -z ${__gh_ralph_gh_prev} ]] && declare -F _completion_loader >/dev/null 2>&1; then
    _completion_loader gh >/dev/null 2>&1
    __gh_ralph_gh_prev=$(complete -p gh 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
fi
if [[ ${__gh_ralph_gh_prev} == __gh_ralph_gh ]]; then
    __gh_ralph_gh_prev=${__gh_ralph_gh_prev_kept-}
fi
__gh_ralph_gh_prev_kept=${__gh_ralph_gh_prev}

__gh_ralph_gh()
{
    if [[ ${COMP_CWORD} -ge 2 && ${COMP_WORDS[1]} == ralph ]]; then
        __start_gh-ralph
        return
    fi
    if [[ -n ${__gh_ralph_gh_prev_kept} ]] && declare -F "${__gh_ralph_gh_prev_kept}" >/dev/null 2>&1; then
        "${__gh_ralph_gh_prev_kept}" "$@"
    fi
}

if [[ $(type -t compopt) = "builtin" ]]; then
    complete -o default -F __gh_ralph_gh gh
else
    complete -o default -o nospace -F __gh_ralph_gh gh
fi
`

// cobraRequest is the line of cobra's bash script that asks the program for completions; ralphRequest
// asks `gh ralph` when the words are gh's (gh ralph adv), gh-ralph when they are the binary's.
const (
	cobraArgs    = `    args=("${words[@]:1}")` + "\n"
	cobraRequest = `    requestComp="${words[0]} __complete ${args[*]}"` + "\n"
	ralphRequest = `    # "gh ralph …" asks gh ralph (through gh); "gh-ralph …" the binary.
    local skip=2
    [[ ${words[0]##*/} == gh-ralph ]] && skip=1
    args=("${words[@]:skip}")
    requestComp="${words[*]:0:skip} __complete ${args[*]}"
`
)

// bashCompletion writes the bash completion script of gh ralph: cobra's, asking gh ralph when the words
// are gh's, and the hook on gh's completion.
func bashCompletion(root *cobra.Command, w io.Writer, descriptions bool) error {
	var b bytes.Buffer
	if err := root.GenBashCompletionV2(&b, descriptions); err != nil {
		return err
	}
	script := b.String()
	if strings.Count(script, cobraArgs+cobraRequest) != 1 {
		return errors.New("the bash completion script has changed: its request line is not cobra's (update bashCompletion)")
	}
	script = strings.Replace(script, cobraArgs+cobraRequest, ralphRequest, 1)
	_, err := io.WriteString(w, script+bashHook)
	return err
}

// setUpCompletion gives root cobra's completion command with ralph's help and its bash script.
func setUpCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	comp, _, err := root.Find([]string{"completion"})
	if err != nil || comp == root {
		return
	}
	comp.Long = completionHelp
	comp.Example = `  $ source <(gh ralph completion bash)`
	for _, c := range comp.Commands() {
		if c.Name() != "bash" {
			continue
		}
		c.Long = "Print the bash completion script of gh ralph (and the gh-ralph binary).\n\n" + completionHelp
		c.RunE = func(cmd *cobra.Command, _ []string) error {
			noDesc, _ := cmd.Flags().GetBool("no-descriptions")
			return bashCompletion(cmd.Root(), cmd.OutOrStdout(), !noDesc)
		}
	}
}
