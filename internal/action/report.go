package action

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/ralph-dev/gh-ralph/internal/inert"
)

// reporter is how the action reports what it does: workflow commands on a GitHub Actions runner, plain
// lines when a person runs it by hand (the README's "run ralph's main job").
type reporter interface {
	AddMask(secret string)
	Infof(format string, args ...any)
	Noticef(format string, args ...any)
	Warningf(format string, args ...any)
	Errorf(format string, args ...any)
	// ErrorAt is an error about a line of a file (a bad config): an annotation there on a runner.
	ErrorAt(file string, line, col int, title, msg string)
	Group(title string)
	EndGroup()
	SetOutput(name, value string)
	AddStepSummary(markdown string)
}

// newReporter is go-githubactions' workflow commands on a runner (GITHUB_ACTIONS=true), and plain text
// anywhere else: a workflow command means nothing to a terminal, and one of them, ::add-mask::, would
// print the token it masks.
func newReporter(inActions bool, getenv func(string) string, out io.Writer) reporter {
	if inActions {
		return workflowCommands{githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(out))}
	}
	return plainReport{out: out}
}

// workflowCommands reports through the runner's workflow commands.
type workflowCommands struct{ *githubactions.Action }

func (w workflowCommands) ErrorAt(file string, line, col int, title, msg string) {
	w.WithFieldsMap(map[string]string{"file": file, "line": strconv.Itoa(line), "col": strconv.Itoa(col), "title": title}).Errorf("%s", msg)
}

// plainReport is the action's report off a runner: one plain line per message (a message's own line breaks
// kept, not %0A), no mask (nothing reads one; the token is never printed), groups as a title line.
type plainReport struct{ out io.Writer }

func (p plainReport) line(prefix, format string, args ...any) {
	// A message quotes what is not ralph's (an issue's title, a reason, a file's name): inert, and no line
	// of it a workflow command.
	msg := inert.String(plain(strings.TrimRight(fmt.Sprintf(format, args...), "\n")))
	fmt.Fprintf(p.out, "%s%s\n", prefix, msg)
}

func (plainReport) AddMask(string)                              {}
func (p plainReport) Infof(format string, args ...any)          { p.line("", format, args...) }
func (p plainReport) Noticef(format string, args ...any)        { p.line("notice: ", format, args...) }
func (p plainReport) Warningf(format string, args ...any)       { p.line("warning: ", format, args...) }
func (p plainReport) Errorf(format string, args ...any)         { p.line("error: ", format, args...) }
func (p plainReport) Group(title string)                        { p.line("", "%s", title) }
func (plainReport) EndGroup()                                   {}
func (p plainReport) SetOutput(name, value string)              { p.line("", "%s=%s", name, value) }
func (plainReport) AddStepSummary(string)                       {}
func (p plainReport) ErrorAt(_ string, _, _ int, _, msg string) { p.line("error: ", "%s", msg) }
