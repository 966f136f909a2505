package action

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/view"
)

// The Action's log: ralph's lines, none of them a workflow command, and the agent's output fenced.

// actionLog is the engine's logger in the Actions log.
type actionLog struct {
	a   reporter
	out io.Writer
}

// Infof prints a line of ralph's log. The runner reads every line of a step's output for workflow commands
// ("::name::", anywhere after leading spaces, and the older "##[name]" anywhere in a line), and ralph's log
// quotes text that is not its own (a file's name, a reason, a person's words): no line of it may be one.
// Warnf goes through go-githubactions, which escapes its message's line breaks already.
func (l actionLog) Infof(format string, args ...any) {
	l.a.Infof("%s", plain(fmt.Sprintf(format, args...)))
}

// plain makes a message one that holds no workflow command on any of its lines.
func plain(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r", ""), "\n")
	for i, line := range lines {
		line = strings.ReplaceAll(line, "##[", "#\u200b#[")
		if rest := strings.TrimLeft(line, " \t"); strings.HasPrefix(rest, "::") {
			line = line[:len(line)-len(rest)] + ":\u200b:" + rest[2:]
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n")
}
func (l actionLog) Warnf(format string, args ...any) { l.a.Warningf(format, args...) }

// Untrusted fences the output in a group with ::stop-commands:: and a token of its own, fresh each time,
// so that no workflow command the agent prints (::set-output, ::add-mask, another ::stop-commands::) takes
// effect; the token is printed only by ralph, and the agent cannot read ralph's output.
func (l actionLog) Untrusted(title string) (io.Writer, func()) {
	l.a.Group(title)
	start := time.Now()
	took := func() { l.Infof("%s: %s", title, view.Elapsed(time.Since(start))) }
	if _, ok := l.a.(plainReport); ok {
		// Off a runner there is no ::stop-commands:: to rely on, and the output may reach a terminal: it
		// is made inert line by line and character by character.
		o := newByHandOutput(l.out)
		return o, func() { o.end(); took() }
	}
	token := randomToken()
	fmt.Fprintf(l.out, "::stop-commands::%s\n", token)
	return l.out, func() {
		// On a line of its own, whatever the agent's last line was.
		fmt.Fprintf(l.out, "\n::%s::\n", token)
		l.a.EndGroup()
		took()
	}
}

func randomToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}
