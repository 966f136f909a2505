package workflow

import (
	"fmt"
	"slices"
	"strings"
)

// Mermaid returns a Mermaid stateDiagram-v2 of the workflow, drawn from
// the table so that the picture cannot drift from what Check allows. Each
// From→To pair is one edge, labelled with every event that makes that move
// (with its guard's name, when the move is declared under one).
// current is highlighted; "" or an invalid state highlights nothing.
//
// The result is the diagram body without the ```mermaid fences, ending in a
// newline, ready to put inside a fenced block of an issue comment.
func (t Table) Mermaid(current State) string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	// State ids are CamelCase because Mermaid ids cannot hold "-" or spaces;
	// the description carries the name people read.
	for _, s := range States() {
		fmt.Fprintf(&b, "    %s: %s\n", mermaidID(s), s.Title())
	}

	type pair struct{ from, to State }
	var pairs []pair
	events := map[pair][]string{}
	for _, tr := range t.moves {
		p := pair{tr.From, tr.To}
		if _, seen := events[p]; !seen {
			pairs = append(pairs, p)
		}
		if l := t.label(tr); !slices.Contains(events[p], l) {
			events[p] = append(events[p], l)
		}
	}
	for _, p := range pairs {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", mermaidID(p.from), mermaidID(p.to), strings.Join(events[p], ", "))
	}

	if current.Valid() {
		b.WriteString("    classDef current fill:#fff8c5,stroke:#9a6700,stroke-width:3px,font-weight:bold\n")
		fmt.Fprintf(&b, "    class %s current\n", mermaidID(current))
	}
	return b.String()
}

// mermaidID turns "research-needed" into "ResearchNeeded". The not-enrolled
// state "" is Mermaid's start pseudo-state.
func mermaidID(s State) string {
	if s == "" {
		return "[*]"
	}
	var b strings.Builder
	for _, word := range strings.Split(string(s), "-") {
		if word == "" {
			continue
		}
		b.WriteString(strings.ToUpper(word[:1]))
		b.WriteString(word[1:])
	}
	return b.String()
}
