package cli

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every flag of every command reads well in its --help: the word after the flag is a placeholder
// (STATE, K, or the flag's type), never a phrase that pflag took from back-quotes in the help text
// ("--advance gh ralph advance"), nor one of the values ("--agent claude").
func TestFlagHelpReadsWell(t *testing.T) {
	t.Parallel()
	root := NewCmdRoot(&Factory{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard})
	placeholder := regexp.MustCompile(`^[A-Z[][A-Z0-9_\[\]/]*$`)
	// gh's own words for the --json, --jq and --template flags, and pflag's type names.
	known := map[string]bool{"": true, "fields": true, "expression": true, "string": true, "int": true, "duration": true, "strings": true}
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		check := func(fl *pflag.Flag) {
			name, usage := pflag.UnquoteUsage(fl)
			if !known[name] && !placeholder.MatchString(name) {
				t.Errorf("%s --%s: its help shows %q after the flag, want a placeholder such as STATE", c.CommandPath(), fl.Name, name)
			}
			if strings.Contains(usage, "`") {
				t.Errorf("%s --%s: help %q keeps a back-quote", c.CommandPath(), fl.Name, usage)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
}
