package agent

import "github.com/ralph-dev/gh-ralph/internal/preset"

// ActionRef is how a workflow step names ralph's action: this one's image has no agent CLI (for
// agent.preset command); ActionRef/<agent> (ActionOf) is the same action with the image of that agent's CLI.
const ActionRef = "ralph-dev/gh-ralph"

// ActionOf is the action whose image holds the CLI of preset name (every preset of preset.List has one): ActionRef/<preset>, or ActionRef itself
// for a preset without one (command).
func ActionOf(name string) string {
	if _, ok := preset.Lookup(name); ok {
		return ActionRef + "/" + name
	}
	return ActionRef
}
