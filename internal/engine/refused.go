package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/netproxy"
)

// refusedMax bounds the refused hosts one run records: the agent chooses them.
const refusedMax = netproxy.MaxRefused

// refusedLen bounds a recorded host, in bytes: the record lives in a comment GitHub bounds.
const refusedLen = 100

// refusedSection is the status comment's list of the hosts the agent was refused, each once,
// quoted inert (the agent chose them), with the line of the config that would allow them.
func refusedSection(rec Record) string {
	if len(rec.Refused) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Network refused\n\nralph's network proxy refused the agent these hosts (they are not on the allow-list, `network.allow`):\n\n")
	var quoted []string
	for _, h := range rec.Refused {
		fmt.Fprintf(&b, "- `%s`\n", inertCode(h))
		quoted = append(quoted, strconv.Quote(inertCode(h)))
	}
	fmt.Fprintf(&b, "\nIf the agent needs them, allow them in `.github/ralph.yml`:\n\n```yaml\nnetwork:\n  allow: [%s]\n```\n", strings.Join(quoted, ", "))
	return b.String()
}

// RefusedLines are what a door prints of a run's refused hosts: each once, and the config line that would
// allow them; nil when none was refused.
func RefusedLines(hosts []string) []string {
	if len(hosts) == 0 {
		return nil
	}
	var lines, quoted []string
	for _, h := range hosts {
		lines = append(lines, "ralph's network proxy refused the agent `"+inertCode(h)+"`")
		quoted = append(quoted, strconv.Quote(inertCode(h)))
	}
	return append(lines, "to allow them, add to .github/ralph.yml: network.allow: ["+strings.Join(quoted, ", ")+"]")
}

// inertCode is a host as code in Markdown: the proxy keeps hosts to host characters, and anything else is
// made inert and stripped of backticks, which would end the code span.
func inertCode(h string) string {
	return strings.ReplaceAll(Inert(h), "`", "'")
}
