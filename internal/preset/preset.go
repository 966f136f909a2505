// Package preset declares the agent CLIs ralph wraps, each as one value of Preset: everything ralph knows of
// an agent (its program and npm package, its model vendor and key variables, its arguments, its output
// format, what it needs in its HOME) is there, and config, init, doctor, the gateway and the images derive
// from the list.
package preset

import (
	"fmt"
	"slices"
	"strings"
)

// Preset is one agent CLI ralph wraps.
type Preset struct {
	Name    string // agent.preset, the image's suffix and the directory of its action (claude)
	Title   string // how the README and its action name the CLI (Claude Code)
	Program string // the program its npm package installs
	Package string // the npm package
	Version string // the version it was proven with, which script/image.sh pins (with its integrity)
	Vendor  string // the model API it speaks: one of Vendors
	// More are the other model APIs its CLI can talk to, for a CLI that picks its provider per model
	// (opencode): agent.model "<vendor>/<model>" picks the vendor of the main model (VendorFor), and
	// ralph's gateway serves each of them whose key ralph holds, all metered into the run's one budget.
	More []string
	// KeyVars are the variables its CLI reads its API key from; the first is the one ralph suggests (gh
	// ralph init passes it through in agent.env and stores it as a secret of that name).
	KeyVars []string
	// Args are its non-interactive arguments (the prompt comes on stdin), before agent.args.
	Args func(Settings) []string
	// PromptArg is the flag whose argument is the prompt, for a CLI that does not read it from stdin
	// ("": stdin).
	PromptArg string
	// GatewayArgs are what it needs besides its environment to reach ralph's gateway (nil: nothing).
	GatewayArgs func(Gateway) []string
	// GatewayEnv are the variables (NAME=value) that point it at ralph's gateway beyond its vendor's base
	// URL and key variables (nil: none); ralph drops the agent.env values of these names.
	GatewayEnv func(Gateway) []string
	// GatewayHome are files it needs in its HOME to reach ralph's gateway, for a CLI that reads the
	// vendor's URL from no variable (nil: none): written, in place of what is there, each time it runs
	// with the gateway.
	GatewayHome func(Gateway) []File
	// Stream is the format of what it prints, which picks the parser of its events.
	Stream Stream
	// ReportsCost is true when it reports its own cost, so that agent.max_cost holds without the gateway.
	ReportsCost bool
	// Home are files it needs in its HOME to run headless against a base URL that is not its vendor's:
	// written, unless there already, when it runs with the gateway or has its first key variable.
	Home []File
	// WithoutGateway says what the agent holds, and what bounds its spending, when it runs without ralph's
	// gateway in a way that is not simply its vendor's key ("": nothing more to say); doctor says it.
	WithoutGateway string
	// InBoundary is its argv when ralph's boundary holds it (nil: unchanged).
	InBoundary func(argv []string) []string
	// ConfigPaths are the repository paths its CLI reads as its configuration, instructions, agents,
	// skills, hooks or MCP servers (patterns as protected_paths takes them): a phase that wrote them would
	// steer the agent of the next, so ralph protects them whenever this preset runs, whatever
	// protected_paths says.
	ConfigPaths []string
}

// VendorFor is the vendor of model: the one its "<vendor>/" prefix names when that is one of the
// preset's, else Vendor.
func (p Preset) VendorFor(model string) string {
	if v, _, ok := strings.Cut(model, "/"); ok && slices.Contains(p.More, v) {
		return v
	}
	return p.Vendor
}

// Settings are the agent: settings a preset's arguments take.
type Settings struct {
	Model    string  // agent.model
	MaxTurns int     // agent.max_turns
	MaxCost  float64 // agent.max_cost
}

// Gateway is what a preset's GatewayArgs take of ralph's model gateway.
type Gateway struct {
	URL       string // the gateway's base URL
	Key       string // the gateway's key, good for this run
	KeyVar    string // the variable holding the gateway's key
	Model     string // agent.model
	WebSearch bool   // gateway.server_tools allows the vendor's web search
	// URLs are the base URLs of each of the preset's vendors through the gateway (Vendor and More), for a
	// CLI that talks to several; a vendor ralph holds no key for is there too, and the gateway refuses it.
	URLs map[string]string
}

// File is a file of the agent's HOME.
type File struct {
	Path    string // relative to HOME
	Content string
}

// Stream is the format of a CLI's output.
type Stream string

// The output formats of the presets' CLIs.
const (
	ClaudeStreamJSON Stream = "claude-stream-json" // Claude Code's --output-format stream-json
	CodexJSONL       Stream = "codex-jsonl"        // codex exec --json
	GeminiStreamJSON Stream = "gemini-stream-json" // Gemini CLI's --output-format stream-json
	CopilotJSONL     Stream = "copilot-jsonl"      // Copilot CLI's --output-format json
	OpencodeJSONL    Stream = "opencode-jsonl"     // opencode run --format json
	PiJSONL          Stream = "pi-jsonl"           // pi -p --mode json
)

// Vendor is a model API ralph's gateway serves.
type Vendor struct {
	Name string // gateway.vendor
	// BaseURLs are the variables through which its CLIs and SDKs take the API's URL: with the gateway on,
	// ralph sets them to the gateway.
	BaseURLs []BaseURL
}

// BaseURL is a variable holding a vendor API's URL, and the path the URL must end in for its readers.
type BaseURL struct {
	Var    string
	Suffix string
}

// Vendors are the model APIs ralph's gateway serves.
func Vendors() []Vendor {
	return []Vendor{
		{Name: "anthropic", BaseURLs: []BaseURL{{Var: "ANTHROPIC_BASE_URL"}}},
		{Name: "openai", BaseURLs: []BaseURL{{Var: "OPENAI_BASE_URL", Suffix: "/v1"}}},
		{Name: "gemini", BaseURLs: []BaseURL{{Var: "GOOGLE_GEMINI_BASE_URL"}}},
	}
}

// VendorNames are the names of Vendors.
func VendorNames() []string {
	var out []string
	for _, v := range Vendors() {
		out = append(out, v.Name)
	}
	return out
}

// VendorOf is the vendor named name.
func VendorOf(name string) (Vendor, bool) {
	for _, v := range Vendors() {
		if v.Name == name {
			return v, true
		}
	}
	return Vendor{}, false
}

// List are the presets, in the order ralph offers them.
func List() []Preset { return []Preset{claude(), codex(), gemini(), copilot(), opencode(), pi()} }

// Names are the presets' names, in List's order.
func Names() []string {
	var out []string
	for _, p := range List() {
		out = append(out, p.Name)
	}
	return out
}

// Lookup is the preset named name; ok is false for any other name (command among them).
func Lookup(name string) (Preset, bool) {
	for _, p := range List() {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

// Check says which of a preset's required fields is missing or wrong, or nil.
func Check(p Preset) error {
	var missing []string
	for _, f := range []struct {
		name  string
		unset bool
	}{
		{"Name", p.Name == ""}, {"Title", p.Title == ""}, {"Program", p.Program == ""},
		{"Package", p.Package == ""}, {"Version", p.Version == ""}, {"Vendor", p.Vendor == ""},
		{"KeyVars", len(p.KeyVars) == 0}, {"Args", p.Args == nil}, {"Stream", p.Stream == ""},
		{"ConfigPaths", len(p.ConfigPaths) == 0},
	} {
		if f.unset {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("preset %q leaves out %s: every preset declares them", p.Name, strings.Join(missing, ", "))
	}
	for _, v := range append([]string{p.Vendor}, p.More...) {
		if _, ok := VendorOf(v); !ok {
			return fmt.Errorf("preset %q speaks vendor %q, which is not one of %s", p.Name, v, strings.Join(VendorNames(), ", "))
		}
	}
	for i, v := range p.More {
		if v == p.Vendor || slices.Contains(p.More[:i], v) {
			return fmt.Errorf("preset %q names vendor %q twice", p.Name, v)
		}
	}
	for _, f := range p.Home {
		if f.Path == "" || strings.HasPrefix(f.Path, "/") || strings.Contains(f.Path, "..") {
			return fmt.Errorf("preset %q has a HOME file %q that is not a path inside HOME", p.Name, f.Path)
		}
	}
	return nil
}

// Join is names as a sentence says them: "a, b and c" (with conj "and").
func Join(names []string, conj string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}
