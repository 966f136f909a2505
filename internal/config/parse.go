package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ralph-dev/gh-ralph/internal/preset"
	"gopkg.in/yaml.v3"
)

// Parse decodes a config file's contents over [Default]. file is used only in
// errors. Every problem in the file is reported at once, in line order: the
// error is an *Error when there is one, an [Errors] when there are more
// (errors.As finds the first *Error in either). A YAML syntax error stops
// the reading, so it is reported alone.
func Parse(file string, data []byte) (Config, error) {
	p := parser{file: file}
	c, err := p.parse(data)
	if err == nil {
		err = p.problems()
	}
	if err != nil {
		return Config{}, err
	}
	return c, nil
}

// Errors are the problems in one config file, in line order.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As and errors.Is see each problem.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Problems lists the config problems err carries, in line order: one for an
// *Error, each of an [Errors], none for any other error.
func Problems(err error) []*Error {
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	var e *Error
	if errors.As(err, &e) {
		return []*Error{e}
	}
	return nil
}

// The keys of each mapping, in SPEC order: the order they are listed in
// errors.
var (
	topKeys = []string{
		"review", "triage", "research", "self_review", "security_review", "max_iterations", "max_failures", "max_phases",
		"base_branch", "branch_prefix", "draft_pr", "documents", "chain", "workflow", "protected_paths", "verify",
		"agent", "sweep", "split", "ci", "allowed_bots", "lock_lease", "project", "gateway", "budget", "network",
	}
	agentKeys = []string{"preset", "command", "timeout", "env", "model", "max_turns", "args", "max_cost", "max_tokens", "landlock"}
	sweepKeys = []string{"max", "matrix"}
	splitKeys = []string{"max", "approve"}
	ciKeys    = []string{"max_fixes"}
	reviews   = []string{string(ReviewSkip), string(ReviewAuto), string(ReviewInteractive)}
	documents = []string{string(DocumentsBranch), string(DocumentsSeparate)}
)

// CredentialNames are the variables through which ralph (or the Actions runner) holds a credential or a
// channel to the runner. The SPEC promises that the agent never sees one: naming one in agent.env is
// refused here, where the user can be told which line, and the agent's environment never carries one
// (agent.Forbidden).
var CredentialNames = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
	"INPUT_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
	"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY",
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

type parser struct {
	file string
	// at is the key node of every setting read so far, by dotted path, for checks that span sections.
	at map[string]*yaml.Node
	// errs are the problems found so far: a bad setting is reported and the reading goes on.
	errs []*Error
	// unknown holds the sections (dotted paths) with an unknown key: a misspelt key is reported as such,
	// not also as the missing one it meant to set.
	unknown map[string]bool
}

// report keeps a problem and lets the reading go on to the next setting.
func (p *parser) report(err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{File: p.file, Msg: err.Error()}
	}
	p.errs = append(p.errs, e)
}

// problems is every problem reported, in the order of their places in the file.
func (p *parser) problems() error {
	switch len(p.errs) {
	case 0:
		return nil
	case 1:
		return p.errs[0]
	}
	es := Errors(p.errs)
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Column < es[j].Column
	})
	return es
}

func (p *parser) errorf(n *yaml.Node, key, format string, args ...any) *Error {
	return &Error{File: p.file, Line: n.Line, Column: n.Column, Key: key, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) parse(data []byte) (Config, error) {
	c := Default()
	if err := p.checkText(data); err != nil {
		return Config{}, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil // an empty file, or only comments
		}
		return Config{}, p.syntaxError(err, data)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return Config{}, p.errorf(&extra, "", "only one YAML document is allowed; remove the second ---")
	case !errors.Is(err, io.EOF):
		return Config{}, p.syntaxError(err, data)
	}

	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return c, nil
		}
		root = root.Content[0]
	}
	if isNull(root) {
		return c, nil
	}
	if root.Kind != yaml.MappingNode {
		return Config{}, p.errorf(root, "", "the file must be a mapping of settings, such as `review: auto`")
	}
	if err := p.top(root, &c); err != nil {
		return Config{}, err
	}
	return c, nil
}

// yamlLine finds the line in yaml.v3's error text, which has no typed form.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError reports a YAML syntax error at the character where the
// reading failed. yaml.v3's error names no column, and its line is that of
// the construct it was reading (the mapping above a misindented key, the
// "[" of an unclosed list), or none on the first line. The reading is a
// stream, so the shortest start of the file that fails with the same
// problem ends at the character that made it fail.
func (p *parser) syntaxError(err error, data []byte) *Error {
	line, msg := splitYAMLError(err)
	e := &Error{File: p.file, Line: line, Msg: "invalid YAML: " + msg}
	if e.Line == 0 {
		// yaml.v3 leaves the line out when it is the first one. Its other
		// line-less errors are about bytes that are not text, which
		// checkText has already reported with their place.
		e.Line = 1
	}
	if end := failingPrefix(data, msg); end > 0 {
		e.Line, e.Column = place(data, end-1)
	}
	return e
}

// splitYAMLError parts yaml.v3's error text into its line (0 if none) and
// its message.
func splitYAMLError(err error) (int, string) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, msg[len(m[0]):]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

// failingPrefix is the length of the shortest start of data whose reading
// fails with msg, or 0 if there is none. It tries whole lines first, then
// the characters of the first line that fails, so it reads the file about
// as many times as it has lines, and only when the file is not valid.
func failingPrefix(data []byte, msg string) int {
	fails := func(n int) bool {
		dec := yaml.NewDecoder(bytes.NewReader(data[:n]))
		for {
			var doc yaml.Node
			err := dec.Decode(&doc)
			if err == nil {
				continue
			}
			if errors.Is(err, io.EOF) {
				return false
			}
			_, m := splitYAMLError(err)
			return m == msg
		}
	}
	lineStart, lineEnd := -1, 0
	for start := 0; start < len(data); {
		end := len(data)
		if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
			end = start + i + 1
		}
		if fails(end) {
			lineStart, lineEnd = start, end
			break
		}
		start = end
	}
	if lineStart < 0 {
		return 0
	}
	for n := lineStart + 1; n < lineEnd; n++ {
		if utf8.RuneStart(data[n]) && fails(n) {
			return n
		}
	}
	return lineEnd
}

// place is the 1-based line and column (in characters) of data[off].
func place(data []byte, off int) (line, column int) {
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(data[lineStart:off]) + 1
}

// checkText reports bytes that YAML does not accept as text (invalid UTF-8,
// control characters) with their line and column, which yaml.v3's own error
// for them lacks.
func (p *parser) checkText(data []byte) *Error {
	line, col := 1, 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		switch {
		case r == utf8.RuneError && size == 1:
			return &Error{File: p.file, Line: line, Column: col, Msg: "the file is not UTF-8 text"}
		case r == '\n':
			line, col = line+1, 0
		case r == '\t' || r == '\r' || r == 0x85:
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return &Error{File: p.file, Line: line, Column: col, Msg: fmt.Sprintf("control character %U is not allowed in YAML", r)}
		}
		data = data[size:]
		col++
	}
	return nil
}

// field is one key: value pair of a mapping, with the key's dotted path.
type field struct {
	name  string
	path  string
	key   *yaml.Node
	value *yaml.Node
}

// fields checks a mapping's keys (known, plain, not repeated) and returns
// its good pairs in file order; a bad key is reported and left out. section
// is "" at the top level.
func (p *parser) fields(m *yaml.Node, section string, known []string) []field {
	var out []field
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.report(p.errorf(k, section, "keys must be plain names"))
			continue
		}
		dotted := k.Value
		if section != "" {
			dotted = section + "." + k.Value
		}
		if first, dup := seen[k.Value]; dup {
			p.report(p.errorf(k, dotted, "duplicate key (first set on line %d)", first.Line))
			continue
		}
		seen[k.Value] = k
		if p.at == nil {
			p.at = map[string]*yaml.Node{}
		}
		p.at[dotted] = k
		if known != nil && !contains(known, k.Value) {
			p.report(p.errorf(k, dotted, "%s", unknownKey(k.Value, section, known)))
			if p.unknown == nil {
				p.unknown = map[string]bool{}
			}
			p.unknown[section] = true
			continue
		}
		out = append(out, field{name: k.Value, path: dotted, key: k, value: resolve(v)})
	}
	return out
}

func (p *parser) top(m *yaml.Node, c *Config) error {
	var err error
	pairs := p.fields(m, "", topKeys)
	for _, f := range pairs {
		n := f.value
		switch f.name {
		case "review":
			var s string
			s, err = p.choice(n, f.path, reviews)
			c.Review = ReviewMode(s)
		case "triage":
			c.Triage, err = p.boolean(n, f.path)
		case "research":
			c.Research, err = p.boolean(n, f.path)
		case "self_review":
			c.SelfReview, err = p.boolean(n, f.path)
		case "security_review":
			c.SecurityReview, err = p.boolean(n, f.path)
		case "max_iterations":
			c.MaxIterations, err = p.count(n, f.path)
		case "max_failures":
			c.MaxFailures, err = p.count(n, f.path)
		case "max_phases":
			c.MaxPhases, err = p.count(n, f.path)
		case "base_branch":
			if c.BaseBranch, err = p.str(n, f.path); err == nil && c.BaseBranch != "" {
				if why := CheckBranch(c.BaseBranch); why != "" {
					err = p.errorf(n, f.path, "%q is not a valid branch name: %s", c.BaseBranch, why)
				}
			}
		case "branch_prefix":
			if c.BranchPrefix, err = p.str(n, f.path); err == nil {
				if why := checkRefPart(c.BranchPrefix); why != "" {
					err = p.errorf(n, f.path, "%q cannot start a git branch name: %s", c.BranchPrefix, why)
				}
			}
		case "draft_pr":
			c.DraftPR, err = p.boolean(n, f.path)
		case "documents":
			var s string
			s, err = p.choice(n, f.path, documents)
			c.Documents = DocumentsMode(s)
		case "chain":
			c.Chain, err = p.boolean(n, f.path)
		case "workflow":
			if c.Workflow, err = p.str(n, f.path); err == nil && c.Workflow != "" {
				if c.Workflow != path.Base(c.Workflow) || !strings.HasSuffix(c.Workflow, ".yml") && !strings.HasSuffix(c.Workflow, ".yaml") {
					err = p.errorf(n, f.path, "%q is not a workflow file's name: name the file in .github/workflows, e.g. ralph.yml", c.Workflow)
				}
			}
		case "protected_paths":
			c.ProtectedPaths, err = p.list(n, f.path, func(item *yaml.Node, key, s string) error {
				if why := checkPattern(s); why != "" {
					return p.errorf(item, key, "%q %s", s, why)
				}
				return nil
			})
		case "verify":
			c.Verify, err = p.list(n, f.path, func(item *yaml.Node, key, s string) error {
				if strings.TrimSpace(s) == "" {
					return p.errorf(item, key, "must be a command, not empty")
				}
				return nil
			})
		case "lock_lease":
			c.LockLease, err = p.duration(n, f.path)
		case "allowed_bots":
			c.AllowedBots, err = p.list(n, f.path, func(item *yaml.Node, key, s string) error {
				if !strings.HasSuffix(s, "[bot]") {
					return p.errorf(item, key, "%q is not a bot login: bot logins end in [bot], e.g. renovate[bot]", s)
				}
				return nil
			})
		case "agent":
			err = p.agent(n, f.path, &c.Agent)
		case "sweep":
			err = p.sweep(n, f.path, &c.Sweep)
		case "split":
			err = p.split(n, f.path, &c.Split)
		case "ci":
			err = p.ci(n, f.path, &c.CI)
		case "project":
			c.Project, err = p.project(n, f.path) // project.go
		case "gateway":
			err = p.gateway(n, f.path, &c.Gateway) // gateway.go
		case "budget":
			err = p.budget(n, f.path, &c.Budget)
		case "network":
			err = p.network(n, f.path, &c.Network) // network.go
		}
		if err != nil {
			p.report(err)
		}
	}
	if len(p.errs) > 0 {
		return nil // the checks across sections need every setting read well
	}
	return p.checkGateway(c, p.at)
}

func (p *parser) agent(n *yaml.Node, section string, a *Agent) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, section, "must be a mapping with the keys %s", strings.Join(agentKeys, ", "))
	}
	var err error
	pairs := p.fields(n, section, agentKeys)
	var presetNode, commandNode *yaml.Node
	var badCommand bool
	presetOnly := map[string]field{}
	for _, f := range pairs {
		switch f.name {
		case "preset":
			presetNode = f.value
			a.Preset, err = p.choice(f.value, f.path, append(preset.Names(), "command"))
		case "command":
			commandNode = f.value
			a.Command, err = p.str(f.value, f.path)
		case "timeout":
			a.Timeout, err = p.duration(f.value, f.path)
		case "env":
			a.Env, err = p.env(f.value, f.path)
		case "model":
			a.Model, err = p.str(f.value, f.path)
		case "max_turns":
			a.MaxTurns, err = p.count(f.value, f.path)
		case "args":
			a.Args, err = p.list(f.value, f.path, func(*yaml.Node, string, string) error { return nil })
		case "max_cost":
			a.MaxCost, err = p.money(f.value, f.path)
		case "max_tokens":
			a.MaxTokens, err = p.count(f.value, f.path)
		case "landlock":
			a.Landlock, err = p.choice(f.value, f.path, []string{LandlockAuto, LandlockRequired})
		}
		if err != nil {
			p.report(err)
			badCommand = badCommand || f.name == "command" // reported as it is, not also as missing
			continue
		}
		presetOnly[f.name] = f
	}
	if a.Preset == "command" {
		// max_cost and max_tokens apply to a command too, when it uses the gateway (checkGateway).
		for _, name := range []string{"model", "max_turns", "args"} {
			if f, ok := presetOnly[name]; ok {
				p.report(p.errorf(f.key, f.path, "applies to the %s presets; with preset command, put it in agent.command", preset.Join(preset.Names(), "and")))
			}
		}
	}
	if a.Preset == "command" && strings.TrimSpace(a.Command) == "" && !badCommand && !p.unknown[section] {
		// Point at the empty command if there is one, else at the preset
		// that asks for it.
		at := presetNode
		if commandNode != nil {
			at = commandNode
		}
		return p.errorf(at, section+".command", `must be set when agent.preset is "command", e.g. command: "my-agent --yes"`)
	}
	return nil
}

func (p *parser) sweep(n *yaml.Node, section string, s *Sweep) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, section, "must be a mapping with the keys %s", strings.Join(sweepKeys, ", "))
	}
	var err error
	pairs := p.fields(n, section, sweepKeys)
	for _, f := range pairs {
		switch f.name {
		case "max":
			s.Max, err = p.count(f.value, f.path)
		case "matrix":
			s.Matrix, err = p.boolean(f.value, f.path)
		}
		if err != nil {
			p.report(err)
		}
	}
	return nil
}

func (p *parser) split(n *yaml.Node, section string, s *Split) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, section, "must be a mapping with the keys %s", strings.Join(splitKeys, ", "))
	}
	var err error
	pairs := p.fields(n, section, splitKeys)
	for _, f := range pairs {
		switch f.name {
		case "max":
			if s.Max, err = p.count(f.value, f.path); err == nil && s.Max < 2 {
				err = p.errorf(f.value, f.path, "must be at least 2 (a split makes two sub-issues or more), not %d", s.Max)
			}
		case "approve":
			s.Approve, err = p.boolean(f.value, f.path)
		}
		if err != nil {
			p.report(err)
		}
	}
	return nil
}

func (p *parser) ci(n *yaml.Node, section string, c *CI) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, section, "must be a mapping with the keys %s", strings.Join(ciKeys, ", "))
	}
	var err error
	pairs := p.fields(n, section, ciKeys)
	for _, f := range pairs {
		if f.name == "max_fixes" {
			c.MaxFixes, err = p.countFrom0(f.value, f.path)
		}
		if err != nil {
			p.report(err)
		}
	}
	return nil
}

// countFrom0 decodes a whole number that may be 0.
func (p *parser) countFrom0(n *yaml.Node, key string) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, p.errorf(n, key, "must be a whole number, not %s", describe(n))
	}
	var i int
	if err := n.Decode(&i); err != nil {
		return 0, p.errorf(n, key, "must be a whole number small enough to count with, not %s", describe(n))
	}
	if i < 0 {
		return 0, p.errorf(n, key, "must be 0 or more, not %d", i)
	}
	return i, nil
}

func (p *parser) env(n *yaml.Node, key string) (map[string]string, error) {
	env := map[string]string{}
	if isNull(n) {
		return env, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n, key, "must be a mapping of variable names to values, such as `API_KEY: \"\"`")
	}
	for _, f := range p.fields(n, key, nil) {
		if !envName.MatchString(f.name) {
			p.report(p.errorf(f.key, f.path, "is not a valid environment variable name (letters, digits and _, not starting with a digit)"))
			continue
		}
		if contains(CredentialNames, strings.ToUpper(f.name)) {
			p.report(p.errorf(f.key, f.path, "is ralph's GitHub token, which the agent must never see"))
			continue
		}
		v, err := p.str(f.value, f.path)
		if err != nil {
			p.report(err)
			continue
		}
		env[f.name] = v
	}
	return env, nil
}

// list decodes a sequence of strings; check vets each item.
func (p *parser) list(n *yaml.Node, key string, check func(item *yaml.Node, key, s string) error) ([]string, error) {
	out := []string{}
	if isNull(n) {
		return out, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errorf(n, key, "must be a list, such as [\"one\", \"two\"] or one \"- item\" per line")
	}
	for i, item := range n.Content {
		item = resolve(item)
		itemKey := fmt.Sprintf("%s[%d]", key, i)
		if isNull(item) {
			p.report(p.errorf(item, itemKey, "must not be empty"))
			continue
		}
		s, err := p.str(item, itemKey)
		if err != nil {
			p.report(err)
			continue
		}
		if err := check(item, itemKey, s); err != nil {
			p.report(err)
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// str accepts any scalar as text, so that `base_branch: 2024` or an env value
// of 1 means what it says; an empty value is "".
func (p *parser) str(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errorf(n, key, "must be a string, not %s", describe(n))
	}
	if isNull(n) {
		return "", nil
	}
	return n.Value, nil
}

func (p *parser) boolean(n *yaml.Node, key string) (bool, error) {
	// Only YAML 1.2 booleans: "yes" and "on" are refused rather than
	// guessed at, and a quoted "true" is a string.
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, p.errorf(n, key, "must be true or false, not %s", describe(n))
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, p.errorf(n, key, "must be true or false, not %s", describe(n))
	}
	return b, nil
}

// count decodes a whole number of at least 1: every count in the config
// bounds something that must happen at least once.
func (p *parser) count(n *yaml.Node, key string) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, p.errorf(n, key, "must be a whole number, not %s", describe(n))
	}
	var i int
	if err := n.Decode(&i); err != nil {
		return 0, p.errorf(n, key, "must be a whole number small enough to count with, not %s", describe(n))
	}
	if i < 1 {
		return 0, p.errorf(n, key, "must be at least 1, not %d", i)
	}
	return i, nil
}

// money decodes an amount in US dollars, more than zero.
func (p *parser) money(n *yaml.Node, key string) (float64, error) {
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!float" && tag != "!!int") {
		return 0, p.errorf(n, key, "must be an amount in US dollars such as 2.50, not %s", describe(n))
	}
	var f float64
	if err := n.Decode(&f); err != nil || f != f || f > 1e9 || f < -1e9 {
		return 0, p.errorf(n, key, "must be an amount in US dollars such as 2.50, not %s", describe(n))
	}
	if f <= 0 {
		return 0, p.errorf(n, key, "must be more than zero, not %s", n.Value)
	}
	return f, nil
}

func (p *parser) choice(n *yaml.Node, key string, allowed []string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" || !contains(allowed, n.Value) {
		return "", p.errorf(n, key, "must be one of %s, not %s", strings.Join(allowed, "|"), describe(n))
	}
	return n.Value, nil
}

func (p *parser) duration(n *yaml.Node, key string) (time.Duration, error) {
	const want = "must be a duration such as 30m, 1h30m or 90s"
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return 0, p.errorf(n, key, "%s, not %s", want, describe(n))
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		return 0, p.errorf(n, key, "%s, not %s", want, describe(n))
	}
	if d <= 0 {
		return 0, p.errorf(n, key, "must be longer than zero, not %s", n.Value)
	}
	return d, nil
}

// describe names a node's value for an error message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if isNull(n) {
		return "empty"
	}
	return strconv.Quote(n.Value)
}

// resolve follows an alias (*name) to the node it names, so that anchors work
// as YAML users expect while errors still point into the file.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
