package cli

import "github.com/ralph-dev/gh-ralph/internal/inert"

// termSafe is what ralph writes to a terminal of text that is not its own (the agent's output, a file's
// name in a message): inert.Filter, control characters and escape sequences shown as caret notation.
type termSafe struct{ inert.Filter }

// filter returns p with every control character but \n and \t made visible.
func (f *termSafe) filter(p []byte) []byte { return f.Bytes(p) }

// termString is termSafe for one whole message.
func termString(s string) string { return inert.String(s) }
