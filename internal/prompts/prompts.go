// Package prompts holds the prompt templates ralph gives the agent, one per step, compiled into the binary
// and overridable per repository from .github/ralph/prompts/<command>.md.
package prompts

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
)

//go:embed templates/*.md
var builtin embed.FS

// OverrideDir is where a repository keeps its own templates, relative to its root.
const OverrideDir = ".github/ralph/prompts"

// Commands lists the agent commands that have a template: one built-in template each (templates/<command>.md),
// so that a step's prompt is one file.
func Commands() []string {
	entries, err := builtin.ReadDir("templates")
	if err != nil {
		panic(err) // the templates are embedded
	}
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".md"); ok {
			out = append(out, name)
		}
	}
	return out
}

// Data is what a template can use. Text that came from GitHub users (Issue.Title, Issue.Body, Comments)
// is untrusted: templates show it with the quote function, inside a fence, as data.
type Data struct {
	Repository string
	Issue      Issue
	Comments   []Comment
	Omitted    int // comments left out because their authors may not drive ralph
	// Hidden says what was removed from the issue's text because GitHub does not show it (Removed.String);
	// "" when nothing was.
	Hidden   string
	Artifact string // where the document must be written (absolute)
	Branch   string
	Base     string

	Research  string // the research document, for plan
	Plan      string // the plan, for review, implement and self-review
	Feedback  string // why the last plan was sent back, for plan
	Phase     int    // implement: the phase to do, 1-based
	Phases    int
	PhaseText string // implement: the phase's section of the plan
	Diff      string // self-review: the branch's diff against the base
	Verify    []string
	Protected []string
}

// Issue is the issue as the prompt shows it.
type Issue struct {
	Number int
	Title  string
	Body   string
	URL    string
}

// Comment is an issue comment as the prompt shows it.
type Comment struct {
	Author string
	Body   string
}

// Set renders the templates, with a repository's overrides in front of the built-in ones.
type Set struct {
	repoRoot string // "" = built-in templates only
}

// New gives a Set that looks for overrides under repoRoot/.github/ralph/prompts ("" for none).
func New(repoRoot string) *Set { return &Set{repoRoot: repoRoot} }

// Source says where the template for command comes from: the override file's path, or "built-in".
func (s *Set) Source(command string) string {
	if p := s.overridePath(command); p != "" {
		if _, err := os.Stat(p); err == nil {
			return filepath.Join(OverrideDir, command+".md")
		}
	}
	return "built-in"
}

func (s *Set) overridePath(command string) string {
	if s.repoRoot == "" {
		return ""
	}
	return filepath.Join(s.repoRoot, OverrideDir, command+".md")
}

// Render produces the prompt for command.
func (s *Set) Render(command string, d Data) (string, error) {
	if !known(command) {
		return "", fmt.Errorf("prompts: no template for %q (known: %s)", command, strings.Join(Commands(), ", "))
	}
	text, name, err := s.text(command)
	if err != nil {
		return "", err
	}
	t, err := template.New(name).Funcs(template.FuncMap{"quote": Quote}).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("prompts: %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("prompts: %s: %w", name, err)
	}
	return b.String(), nil
}

func (s *Set) text(command string) (string, string, error) {
	if p := s.overridePath(command); p != "" {
		b, err := os.ReadFile(p)
		if err == nil {
			return string(b), filepath.Join(OverrideDir, command+".md"), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("prompts: reading %s: %w", p, err)
		}
	}
	b, err := builtin.ReadFile("templates/" + command + ".md")
	if err != nil {
		return "", "", fmt.Errorf("prompts: built-in %s: %w", command, err)
	}
	return string(b), "built-in " + command + ".md", nil
}

func known(command string) bool { return slices.Contains(Commands(), command) }

// Quote wraps untrusted text in a fence longer than any backtick run inside it, so the text cannot close
// the fence and pass itself off as instructions.
func Quote(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			if run > longest {
				longest = run
			}
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence
}
