package config

import (
	"slices"
	"testing"
)

// network.registries narrows the package registries every allow-list has, or ([]) turns them off; absent,
// they are all there.
func TestNetworkRegistries(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		yaml string
		want []string
	}{
		{"network:\n  allow: [example.com]\n", append(slices.Clone(DefaultAllow), "example.com")},
		{"network:\n  registries: []\n  allow: [example.com]\n", []string{"example.com"}},
		{"network:\n  registries: [proxy.golang.org, sum.golang.org]\n", []string{"proxy.golang.org", "sum.golang.org"}},
	} {
		c, err := Parse(".github/ralph.yml", []byte(tt.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tt.yaml, err)
		}
		if got := c.Network.Hosts(); !slices.Equal(got, tt.want) {
			t.Errorf("%q: hosts %v, want %v", tt.yaml, got, tt.want)
		}
	}
}
