package config

import (
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultProjectField is the board field ralph sets when project.field is left out.
const DefaultProjectField = "Workflow State"

// Project is the project: section: a GitHub Projects (V2) board on which every state change also sets the
// issue's option in a single-select field (created by `gh ralph init --project`).
type Project struct {
	// Owner is the user or organization that owns the project; required.
	Owner string // owner
	// Number is the project's number, as in its URL (…/projects/3); required, at least 1.
	Number int // number
	// Field is the single-select field; default DefaultProjectField.
	Field string // field
}

var projectKeys = []string{"owner", "number", "field"}

// login is what GitHub accepts as a user or organization name.
var login = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$`)

// project decodes the project: section; an empty section means no board.
func (p *parser) project(n *yaml.Node, section string) (*Project, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n, section, "must be a mapping with the keys %s, such as {owner: octo, number: 3}", strings.Join(projectKeys, ", "))
	}
	var err error
	pairs := p.fields(n, section, projectKeys)
	pr := &Project{Field: DefaultProjectField}
	seen := map[string]bool{}
	for _, f := range pairs {
		seen[f.name] = true
		switch f.name {
		case "owner":
			if pr.Owner, err = p.str(f.value, f.path); err == nil && !login.MatchString(pr.Owner) {
				err = p.errorf(f.value, f.path, "must be the login of the user or organization that owns the project, not %s", describe(f.value))
			}
		case "number":
			pr.Number, err = p.count(f.value, f.path)
		case "field":
			if pr.Field, err = p.str(f.value, f.path); err == nil && strings.TrimSpace(pr.Field) == "" {
				err = p.errorf(f.value, f.path, "must name a field, or be left out for %q", DefaultProjectField)
			}
		}
		if err != nil {
			p.report(err)
		}
	}
	switch {
	case p.unknown[section]: // a misspelt key is reported as such, not also as a missing one
	case !seen["owner"]:
		return nil, p.errorf(n, section+".owner", "must be set: the user or organization that owns the project")
	case !seen["number"]:
		return nil, p.errorf(n, section+".number", "must be set: the project's number, as in its URL (…/projects/3)")
	}
	return pr, nil
}
