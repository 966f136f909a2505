package doctor

import (
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// A private repository whose agent reaches every package registry is told to narrow them; a public one,
// one that narrowed them, or one in open mode is not.
func TestRegistries(t *testing.T) {
	t.Parallel()
	narrowed := config.Default()
	narrowed.Network.Registries = []string{}
	open := config.Default()
	open.Network.Mode = config.NetworkOpen
	for _, tt := range []struct {
		name    string
		private bool
		cfg     config.Config
		want    bool
	}{
		{"private, every registry", true, config.Default(), true},
		{"public", false, config.Default(), false},
		{"private, narrowed", true, narrowed, false},
		{"private, open mode", true, open, false},
	} {
		f, ok := Registries(tt.private, tt.cfg)
		if ok != tt.want || ok && (!f.Warn || f.Problem || !strings.Contains(f.Fix, "network.registries")) {
			t.Errorf("%s: %+v, %v; want %v", tt.name, f, ok, tt.want)
		}
	}
}
