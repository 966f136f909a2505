package steps

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeDiagram keeps the README's workflow diagram equal to the one generated from the table.
func TestReadmeDiagram(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "```mermaid\n")
	if start < 0 {
		t.Fatal("README.md has no mermaid block")
	}
	rest := readme[start+len("```mermaid\n"):]
	end := strings.Index(rest, "```")
	if got, want := strings.TrimSpace(rest[:end]), strings.TrimSpace(testTable().Flow.Mermaid("")); got != want {
		t.Errorf("README.md's diagram differs from the table's Mermaid(\"\"); paste this in:\n%s", want)
	}
}
