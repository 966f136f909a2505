package config

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The reference is the defaults, says so for every key (with a comment), and the README shows it.
func TestReference(t *testing.T) {
	t.Parallel()
	ref := string(Reference(AgentChoice{}))
	got, err := Parse(DefaultPath, []byte(ref))
	if err != nil {
		t.Fatalf("the reference does not parse: %v\n%s", err, ref)
	}
	if diff := cmp.Diff(Default(), got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("the reference is not the defaults (-default +reference):\n%s", diff)
	}
	// Every key, commented. A section's own line ("agent:") has no comment of its own.
	lines := strings.Split(ref, "\n")
	for _, key := range keys() {
		parts := strings.Split(key, ".")
		name := parts[len(parts)-1]
		indent := strings.Repeat("  ", len(parts)-1)
		re := regexp.MustCompile(`^(# )?` + regexp.QuoteMeta(indent) + `(# {0,2})?` + regexp.QuoteMeta(name) + `:( .*\S)?\s+# \S`)
		found := false
		for _, l := range lines {
			if re.MatchString(l) {
				found = true
			}
		}
		if !found {
			t.Errorf("the reference has no commented line for %s", key)
		}
	}
	// Comments start in one column, so the file reads as a table.
	for _, l := range lines {
		if i := strings.Index(l, " # "); i > 0 && !strings.HasPrefix(strings.TrimSpace(l), "#") && i != 25 && !strings.HasPrefix(strings.TrimSpace(l), "- ") {
			t.Errorf("comment not at column 26: %q", l)
		}
	}

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## Configuration\n")
	_, block, ok2 := strings.Cut(after, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no ```yaml block under ## Configuration")
	}
	if block != ref {
		t.Errorf("the README's configuration block differs from the reference (internal/config/reference.yml.tmpl):\n--- README\n%s\n--- reference\n%s", block, ref)
	}
}

// A choice of agent changes only the agent: the preset, its command, the key it passes through.
func TestReferenceWithAgent(t *testing.T) {
	t.Parallel()
	for _, a := range []AgentChoice{
		{Preset: "claude", Keys: []string{"ANTHROPIC_API_KEY"}},
		{Preset: "codex", Keys: []string{"OPENAI_API_KEY"}},
		{Preset: "gemini", Keys: []string{"GEMINI_API_KEY"}},
		{Preset: "command", Command: `my-agent --yes "and more"`},
	} {
		got, err := Parse(DefaultPath, Reference(a))
		if err != nil {
			t.Errorf("%+v: %v\n%s", a, err, Reference(a))
			continue
		}
		want := Default()
		want.Agent.Preset, want.Agent.Command = a.Preset, a.Command
		for _, k := range a.Keys {
			want.Agent.Env[k] = ""
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", a, diff)
		}
	}
}

// keys are the dotted names of every setting the file may hold, in the order the parser lists them.
func keys() []string {
	var keys []string
	for _, k := range topKeys {
		switch k {
		case "agent":
			for _, a := range agentKeys {
				keys = append(keys, "agent."+a)
			}
		case "sweep":
			for _, s := range sweepKeys {
				keys = append(keys, "sweep."+s)
			}
		case "split":
			for _, s := range splitKeys {
				keys = append(keys, "split."+s)
			}
		case "ci":
			for _, s := range ciKeys {
				keys = append(keys, "ci."+s)
			}
		case "project":
			for _, p := range projectKeys {
				keys = append(keys, "project."+p)
			}
		case "network":
			for _, n := range networkKeys {
				keys = append(keys, "network."+n)
			}
		default:
			keys = append(keys, k)
		}
	}
	return keys
}

var updateExample = flag.Bool("update", false, "rewrite examples/ralph-config.yml from the reference")

// The example config is what gh ralph init --agent claude writes: the reference with claude passing
// ANTHROPIC_API_KEY, which examples/ralph.yml gives ralph's step (go test -update rewrites it).
func TestExampleConfig(t *testing.T) {
	const path = "../../examples/ralph-config.yml"
	want := Reference(AgentChoice{Preset: "claude", Keys: []string{"ANTHROPIC_API_KEY"}})
	if *updateExample {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is not what gh ralph init --agent claude writes (go test ./internal/config -run TestExampleConfig -update rewrites it):\n%s", path, cmp.Diff(string(want), string(got)))
	}
	wf, err := os.ReadFile("../../examples/ralph.yml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wf), "ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}") {
		t.Error("examples/ralph.yml does not give ralph's step ANTHROPIC_API_KEY, which the example config passes to the agent")
	}
}
