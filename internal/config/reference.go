package config

import (
	"bytes"
	_ "embed"
	"strconv"
	"strings"
	"text/template"

	"github.com/ralph-dev/gh-ralph/internal/preset"
)

// The annotated configuration: every key with its default and what it does. It is the one source of the
// README's configuration reference and of the file `gh ralph init` writes (tests keep both equal to it).
//
//go:embed reference.yml.tmpl
var referenceTmpl string

var reference = template.Must(template.New("reference").Funcs(template.FuncMap{
	"quote": strconv.Quote,
	// pad fills out to the comment column: width is what the value may take before it.
	"pad": func(s string, width int) string { return strings.Repeat(" ", max(1, width-len(s))) },
	// presets are agent.preset's choices, as the comment of the key lists them.
	"presets": func() string { return strings.Join(append(preset.Names(), "command"), " | ") },
}).Parse(referenceTmpl))

// AgentChoice is what `gh ralph init` asks of the agent: the preset, the command (for preset command or
// to replace a preset's program) and the variables of agent.env to pass through (its API key).
type AgentChoice struct {
	Preset  string
	Command string
	Keys    []string
	// Verify are the commands that run the repository's tests (init finds them from its files).
	Verify []string
	// Documents is where the documents go, which init asks besides ("": the default).
	Documents DocumentsMode
}

// Reference is the annotated configuration with every key at its default, except the agent's choice.
// Reference(AgentChoice{Preset: "claude"}) is the documented reference.
func Reference(a AgentChoice) []byte {
	if a.Preset == "" {
		a.Preset = Default().Agent.Preset
	}
	if a.Documents == "" {
		a.Documents = Default().Documents
	}
	var b bytes.Buffer
	if err := reference.Execute(&b, a); err != nil {
		panic(err) // the template is compiled in; a test executes it
	}
	return b.Bytes()
}
