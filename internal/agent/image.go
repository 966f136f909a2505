package agent

import "slices"

// ActionRef is how a workflow step names ralph's action: this one's image has no agent CLI (for
// agent.preset command); ActionRef/<agent> (ActionOf) is the same action with the image of that agent's CLI.
const ActionRef = "ralph-dev/gh-ralph"

// ImageAgents are the agents with an image of their own, each named by the action ActionOf gives.
var ImageAgents = []string{"claude", "codex", "gemini"}

// ActionOf is the action whose image holds the CLI of the preset: ActionRef/<preset>, or ActionRef itself
// for a preset without one (command).
func ActionOf(preset string) string {
	if slices.Contains(ImageAgents, preset) {
		return ActionRef + "/" + preset
	}
	return ActionRef
}
