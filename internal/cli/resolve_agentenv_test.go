package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestAgentEnvironHidesGHConfig(t *testing.T) {
	t.Parallel()
	got := agentEnviron([]string{"HOME=/home/mona", "GH_CONFIG_DIR=/home/mona/.config/gh", "PATH=/bin"})
	if !slices.Contains(got, "HOME=/home/mona") || !slices.Contains(got, "PATH=/bin") {
		t.Errorf("agentEnviron dropped the person's variables: %v", got)
	}
	var dirs []string
	for _, kv := range got {
		if v, ok := strings.CutPrefix(kv, "GH_CONFIG_DIR="); ok {
			dirs = append(dirs, v)
		}
	}
	if len(dirs) != 1 || dirs[0] == "/home/mona/.config/gh" {
		t.Errorf("GH_CONFIG_DIR for the agent = %v, want one directory that is not the person's", dirs)
	}
}
