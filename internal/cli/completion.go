package cli

import (
	"bytes"
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

// completionHelp is `gh ralph completion`'s help: gh passes no completion on to its extensions, so each
// script hooks gh's own.
const completionHelp = `Print a shell completion script for gh ralph's commands, flags, states and issue numbers.

gh does not ask its extensions what to complete, so gh's own completion stops at "gh ralph".
The bash, zsh and fish scripts complete "gh ralph …" themselves: each hooks the completion of gh
(gh completion -s SHELL, or the one your system installed), asks gh ralph through gh
(gh ralph __complete …) when the second word is ralph, and leaves every other gh command to gh's
own. Each also completes the gh-ralph binary. The powershell script completes the binary only.

bash (needs the bash-completion package, as gh's own completion does):

  # this shell
  $ source <(gh ralph completion bash)
  # every new shell: after gh's completion is set up in ~/.bashrc
  $ echo 'source <(gh ralph completion bash)' >> ~/.bashrc

zsh (after compinit, which gh's own completion needs too):

  # this shell
  $ source <(gh ralph completion zsh)
  # every new shell: after "autoload -U compinit; compinit" in ~/.zshrc
  $ echo 'source <(gh ralph completion zsh)' >> ~/.zshrc

fish:

  # this shell
  $ gh ralph completion fish | source
  # every new shell (after gh's own completion, if you set it up by hand)
  $ echo 'gh ralph completion fish | source' >> ~/.config/fish/config.fish`

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

// zshHook makes the zsh script of the gh-ralph binary complete `gh ralph …` too: it is appended to cobra's
// script, whose request line is rewritten to ask `gh ralph __complete` when the words are gh's.
const zshHook = `
# gh ralph: gh does not pass completion on to its extensions. This takes over gh's completion,
# completes "gh ralph …" with _gh-ralph above and hands every other gh command to gh's own
# completion function (the one compinit found, _gh).
__gh_ralph_gh_prev=${_comps[gh]-}
if [[ ${__gh_ralph_gh_prev} == _gh_ralph_gh ]]; then
    __gh_ralph_gh_prev=${__gh_ralph_gh_prev_kept-}
fi
__gh_ralph_gh_prev_kept=${__gh_ralph_gh_prev}

_gh_ralph_gh()
{
    if (( CURRENT > 2 )) && [[ ${words[2]} == ralph ]]; then
        _gh-ralph
        return
    fi
    if [[ -n ${__gh_ralph_gh_prev_kept} ]]; then
        "${__gh_ralph_gh_prev_kept}" "$@"
    fi
}

compdef _gh_ralph_gh gh
`

// cobraZshRequest is the line of cobra's zsh script that asks the program for completions; ralphZshRequest
// asks `gh ralph` when the words are gh's, gh-ralph when they are the binary's.
const (
	cobraZshRequest = `    requestComp="${words[1]} __complete ${words[2,-1]}"` + "\n"
	ralphZshRequest = `    # "gh ralph …" asks gh ralph (through gh); "gh-ralph …" the binary.
    if [[ ${words[1]:t} == gh-ralph ]]; then
        requestComp="${words[1]} __complete ${words[2,-1]}"
    else
        requestComp="${words[1,2]} __complete ${words[3,-1]}"
    fi
`
)

// fishHook makes the fish script of the gh-ralph binary complete `gh ralph …` too: it is appended to
// cobra's script, whose request line is rewritten to ask `gh ralph __complete` when the words are gh's.
const fishHook = `
# gh ralph: gh does not pass completion on to its extensions. These complete "gh ralph …" with the
# functions above; every other gh command is left to gh's own completion. gh's own (generated by
# gh completion -s fish) removes every completion of gh it did not make when it is loaded, so it is
# loaded first.
function __gh_ralph_on_gh
    set -l args (commandline -opc)
    test (count $args) -ge 2; and test "$args[2]" = ralph
end
for __gh_ralph_file in $fish_complete_path/gh.fish
    if test -f $__gh_ralph_file
        complete --do-complete "gh " > /dev/null 2>&1
        break
    end
end
set -e __gh_ralph_file
complete -c gh -n '__gh_ralph_on_gh; and __gh_ralph_clear_perform_completion_once_result'
complete -c gh -n '__gh_ralph_on_gh; and not __gh_ralph_requires_order_preservation; and __gh_ralph_prepare_completions' -f -a '$__gh_ralph_comp_results'
complete -k -c gh -n '__gh_ralph_on_gh; and __gh_ralph_requires_order_preservation; and __gh_ralph_prepare_completions' -f -a '$__gh_ralph_comp_results'
`

// cobraFishRequest is the line of cobra's fish script that asks the program for completions;
// ralphFishRequest asks `gh ralph` when the words are gh's, gh-ralph when they are the binary's.
const (
	cobraFishRequest = `    set -l requestComp "GH_RALPH_ACTIVE_HELP=0 $args[1] __complete $args[2..-1] $lastArg"` + "\n"
	ralphFishRequest = `    # "gh ralph …" asks gh ralph (through gh); "gh-ralph …" the binary.
    set -l skip 2
    if test (string replace -r '.*/' '' -- $args[1]) = gh-ralph
        set skip 1
    end
    set -l rest (math $skip + 1)
    set -l requestComp "GH_RALPH_ACTIVE_HELP=0 $args[1..$skip] __complete $args[$rest..-1] $lastArg"
`
)

// hookedCompletion writes a completion script of gh ralph: cobra's (gen), with its request line (cobraLine)
// replaced by ralph's (ralphLine), and the hook on gh's completion. Without descriptions, cobra's script
// asks __completeNoDesc, and so does ralph's.
func hookedCompletion(shell string, gen func(io.Writer) error, w io.Writer, descriptions bool, cobraLine, ralphLine, hook string) error {
	if !descriptions {
		cobraLine = strings.ReplaceAll(cobraLine, " __complete ", " __completeNoDesc ")
		ralphLine = strings.ReplaceAll(ralphLine, " __complete ", " __completeNoDesc ")
	}
	var b bytes.Buffer
	if err := gen(&b); err != nil {
		return err
	}
	script := b.String()
	if strings.Count(script, cobraLine) != 1 {
		return fmt.Errorf("the %s completion script has changed: its request line is not cobra's (update hookedCompletion's caller)", shell)
	}
	script = strings.Replace(script, cobraLine, ralphLine, 1)
	_, err := io.WriteString(w, script+hook)
	return err
}

// bashCompletion writes the bash completion script of gh ralph: cobra's, asking gh ralph when the words
// are gh's, and the hook on gh's completion.
func bashCompletion(root *cobra.Command, w io.Writer, descriptions bool) error {
	gen := func(w io.Writer) error { return root.GenBashCompletionV2(w, descriptions) }
	return hookedCompletion("bash", gen, w, descriptions, cobraArgs+cobraRequest, ralphRequest, bashHook)
}

// setUpCompletion gives root cobra's completion command with ralph's help and its bash script.
func setUpCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	comp, _, err := root.Find([]string{"completion"})
	if err != nil || comp == root {
		return
	}
	comp.Long = completionHelp
	comp.Example = "  $ source <(gh ralph completion bash)\n  $ source <(gh ralph completion zsh)\n  $ gh ralph completion fish | source"
	for _, c := range comp.Commands() {
		switch c.Name() {
		case "bash":
			c.Long = "Print the bash completion script of gh ralph (and the gh-ralph binary).\n\n" + completionHelp
			c.RunE = func(cmd *cobra.Command, _ []string) error {
				noDesc, _ := cmd.Flags().GetBool("no-descriptions")
				return bashCompletion(cmd.Root(), cmd.OutOrStdout(), !noDesc)
			}
		case "zsh":
			c.Long = "Print the zsh completion script of gh ralph (and the gh-ralph binary).\n\n" + completionHelp
			c.RunE = func(cmd *cobra.Command, _ []string) error {
				noDesc, _ := cmd.Flags().GetBool("no-descriptions")
				gen := func(w io.Writer) error { return cmd.Root().GenZshCompletionNoDesc(w) }
				if !noDesc {
					gen = cmd.Root().GenZshCompletion
				}
				return hookedCompletion("zsh", gen, cmd.OutOrStdout(), !noDesc, cobraZshRequest, ralphZshRequest, zshHook)
			}
		case "fish":
			c.Long = "Print the fish completion script of gh ralph (and the gh-ralph binary).\n\n" + completionHelp
			c.RunE = func(cmd *cobra.Command, _ []string) error {
				noDesc, _ := cmd.Flags().GetBool("no-descriptions")
				gen := func(w io.Writer) error { return cmd.Root().GenFishCompletion(w, !noDesc) }
				return hookedCompletion("fish", gen, cmd.OutOrStdout(), !noDesc, cobraFishRequest, ralphFishRequest, fishHook)
			}
		}
	}
}
