package demo

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDemoDoesNotLinkTesting: gh ralph demo ships in ralph's binary, so its in-process GitHub runs without
// the testing package (go test puts the go command on PATH).
func TestDemoDoesNotLinkTesting(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command: %v", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "testing" {
			t.Fatal("internal/demo links the testing package: ralph's binary would carry it")
		}
	}
}
