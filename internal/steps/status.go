package steps

import (
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// RenderStatus renders the status comment of issue n (record.Render), the workflow's parts from the table.
func (t *Table) RenderStatus(n int, rec Record, cfg config.Config, links Links, f Facts) string {
	return record.Render(n, rec, cfg, links, statusParts{t: t, n: n, cfg: cfg, f: f})
}

// statusParts is what the status comment shows of the workflow, which the engine owns: the table's
// checklist, documents and diagram, the planner's "What you can do", and the agent session's sections.
type statusParts struct {
	t   *Table
	n   int
	cfg config.Config
	f   Facts
}

func (p statusParts) Checklist(rec Record) []record.Item {
	var out []record.Item
	for _, it := range p.t.checklist(rec, p.cfg) {
		out = append(out, record.Item{Done: it.Done, Text: it.Text})
	}
	return out
}

func (p statusParts) Documents() []record.Doc {
	var out []record.Doc
	for _, d := range p.t.Documents() {
		out = append(out, record.Doc{Kind: d.Kind, Title: d.Title})
	}
	return out
}

func (p statusParts) Actions(rec Record) string {
	return p.t.Next(p.n, rec, true, Facts{Blockers: []int{}, Unowned: p.f.Unowned, Labeler: p.f.Labeler}, p.cfg).Actions()
}

func (p statusParts) Diagram(st workflow.State) string { return p.t.Flow.Mermaid(st) }

func (p statusParts) Sections(rec Record) string {
	return record.RefusedSection(rec) + record.UsageSection(rec, p.cfg)
}
