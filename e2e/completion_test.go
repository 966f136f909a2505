package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bashCompletionLib is bash-completion's library, which gh's completion script and ralph's need.
const bashCompletionLib = "/usr/share/bash-completion/bash_completion"

// completeScript sources bash-completion and gh ralph's script, then completes each line of lines as
// bash would on <TAB> at its end (through the completion function registered for gh), printing
// "line -> candidates" for each.
const completeScript = `
source ` + bashCompletionLib + `
source <(gh ralph completion bash)
complete_line() {
    COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
    read -ra COMP_WORDS <<<"$COMP_LINE"
    [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMPREPLY=()
    local fn
    fn=$(complete -p gh | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
    "$fn" gh "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>/dev/null
    echo "$1 -> ${COMPREPLY[*]}"
}
while IFS= read -r line; do complete_line "$line"; done
`

// `gh ralph completion bash` completes `gh ralph …` as a person types it, through the real gh, which does
// not pass completion on to its extensions (issue 33): the script hooks gh's completion, asks the extension
// (gh ralph __complete) for the words after ralph, and leaves every other gh command to gh's own.
func TestCompletionOfGhRalph(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: the completion script is bash's")
	}
	if _, err := os.Stat(bashCompletionLib); err != nil {
		t.Skipf("bash-completion is not installed (%s; apt-get install -y bash-completion); .ci/run installs it", bashCompletionLib)
	}
	env := completionEnv(t)
	lines, want := shellLines("bash"), completionWants("bash")
	// gh's own completion, where the system installed it, still completes gh's commands.
	if _, err := os.Stat("/usr/share/bash-completion/completions/gh"); err == nil {
		lines, want["gh pr"] = append(lines, "gh pr"), []string{"pr"}
	}
	cmd := exec.Command(bash, "--noprofile", "--norc", "-c", completeScript)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	checkCompletions(t, "bash", lines, want, out)
}

// completionEnv is the environment of a shell that completes `gh ralph …` through the real gh, with the
// extension installed as gh finds one ($XDG_DATA_HOME/gh/extensions/gh-ralph/gh-ralph); it skips when gh
// is missing.
func completionEnv(t *testing.T) []string {
	t.Helper()
	gh, err := exec.LookPath("gh")
	if err != nil {
		t.Skip("gh is not installed (apt-get install -y gh); .ci/run installs it")
	}
	dir := t.TempDir()
	ext := filepath.Join(dir, "data", "gh", "extensions", "gh-ralph")
	if err := os.MkdirAll(ext, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, filepath.Join(ext, "gh-ralph")); err != nil {
		t.Fatal(err)
	}
	return []string{
		"PATH=" + filepath.Dir(gh) + ":/usr/bin:/bin", "HOME=" + dir, "XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "GH_CONFIG_DIR=" + filepath.Join(dir, "gh-config"),
		"GH_NO_UPDATE_NOTIFIER=1", "GH_TOKEN=", "GH_ENTERPRISE_TOKEN=",
	}
}

// shellLines are the command lines a shell's completion test completes (completionWants says what each
// completes to; "gh ralph " is checked apart: every command of ralph's, none of gh's).
func shellLines(shell string) []string {
	return []string{"gh ralph adv", "gh ralph advance --un", "gh ralph advance 1 --until in-r", "gh ralph completion " + shell[:1], "gh ralph "}
}

// completionWants is what each of shellLines(shell) completes to.
func completionWants(shell string) map[string][]string {
	return map[string][]string{
		"gh ralph adv":                     {"advance"},
		"gh ralph advance --un":            {"--until"},
		"gh ralph advance 1 --until in-r":  {"in-review"},
		"gh ralph completion " + shell[:1]: {shell},
	}
}

// checkCompletions checks the shell's "line -> candidates" output for each of lines against want.
func checkCompletions(t *testing.T, shell string, lines []string, want map[string][]string, out []byte) {
	t.Helper()
	got := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line, cands, ok := strings.Cut(l, " -> "); ok {
			got[line] = strings.Fields(cands)
		}
	}
	for _, line := range lines {
		if line == "gh ralph " {
			for _, c := range []string{"advance", "doctor", "enroll", "status", "sweep"} {
				if !slices.Contains(got[line], c) {
					t.Errorf("%s: %q completes %v, want %s among them\n%s", shell, line, got[line], c, out)
				}
			}
			if slices.Contains(got[line], "pr") {
				t.Errorf("%s: %q completes gh's own commands: %v", shell, line, got[line])
			}
			continue
		}
		if w := want[line]; strings.Join(got[line], " ") != strings.Join(w, " ") {
			t.Errorf("%s: %q completes %v, want %v\n%s", shell, line, got[line], w, out)
		}
	}
}

// zshCompleteScript loads compinit and gh ralph's zsh script, then completes each line as zsh would on
// <TAB> at its end, through the completion function registered for gh: compsys's _describe (which lists
// and matches the candidates) is replaced by one that prints those that match the word being completed.
const zshCompleteScript = `
autoload -U compinit && compinit -u -D
source <(gh ralph completion zsh)
_describe() {
    [[ $1 == -* ]] && shift
    local item
    for item in "${(@P)2}"; do
        [[ ${item%%:*} == ${words[-1]}* ]] && print -rn -- "${item%%:*} "
    done
    return 0
}
compadd() { :; }
_arguments() { :; }
complete_line() {
    words=(${=1})
    [[ $1 == *' ' ]] && words+=('')
    CURRENT=${#words}
    print -rn -- "$1 -> "
    "${_comps[gh]}"
    print
}
print -r -- "gh's own: ${__gh_ralph_gh_prev_kept}"
while IFS= read -r line; do complete_line "$line"; done
`

// `gh ralph completion zsh` completes `gh ralph …` through the real gh, as bash's does, and hands every
// other gh command to gh's own completion function when compinit found one.
func TestCompletionOfGhRalphZsh(t *testing.T) {
	t.Parallel()
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed (apt-get install -y zsh); .ci/run installs it")
	}
	env := completionEnv(t)
	cmd := exec.Command(zsh, "-f", "-c", zshCompleteScript)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(strings.Join(shellLines("zsh"), "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("zsh: %v\n%s", err, out)
	}
	checkCompletions(t, "zsh", shellLines("zsh"), completionWants("zsh"), out)
	// gh's own completion, where the system installed it (the gh package puts _gh in zsh's fpath), is kept
	// for gh's other commands.
	if _, err := os.Stat("/usr/share/zsh/vendor-completions/_gh"); err == nil && !strings.Contains(string(out), "gh's own: _gh\n") {
		t.Errorf("zsh: gh's own completion function is not kept for gh's other commands:\n%s", out)
	}
}

// fishCompleteScript loads gh ralph's fish script and completes each line with fish's own completion
// (complete --do-complete), printing the candidates of each.
const fishCompleteScript = `
gh ralph completion fish | source
while read -l line
    set -l cands
    for c in (complete --do-complete "$line")
        set -a cands (string split -f1 \t -- $c)
    end
    echo "$line -> $cands"
end
`

// `gh ralph completion fish` completes `gh ralph …` through the real gh, as bash's does.
func TestCompletionOfGhRalphFish(t *testing.T) {
	t.Parallel()
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("fish is not installed (apt-get install -y fish); .ci/run installs it")
	}
	env := completionEnv(t)
	cmd := exec.Command(fish, "--no-config", "-c", fishCompleteScript)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(strings.Join(shellLines("fish"), "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fish: %v\n%s", err, out)
	}
	checkCompletions(t, "fish", shellLines("fish"), completionWants("fish"), out)
}
