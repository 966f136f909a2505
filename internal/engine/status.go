package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// saveStatus writes the one status comment: created on the first run, edited in place afterwards.
func (w writer) saveStatus(ctx context.Context) error {
	return w.saveRecord(ctx, w.ic.rec)
}

// saveRecord writes rec as the status comment, whatever the record in this run is.
func (w writer) saveRecord(ctx context.Context, rec Record) error {
	body, _ := fitStatus(w.steps, w.ic.n, rec, w.cfg, w.links(), Facts{Unowned: w.ic.unowned, Labeler: w.ic.labeler})
	if w.ic.status != nil {
		if w.ic.status.Body == body {
			return nil
		}
		cm, err := w.gh.UpdateComment(ctx, w.ic.status.ID, body)
		if err != nil {
			return fmt.Errorf("updating the status comment of #%d: %w", w.ic.n, err)
		}
		w.ic.status = &cm
		return nil
	}
	cm, err := w.createComment(ctx, record.IsStatus, body)
	if err != nil {
		return fmt.Errorf("creating the status comment of #%d: %w", w.ic.n, err)
	}
	w.ic.status = &cm
	if cm.Body != body {
		// A status comment posted by this run's failed request, found again: bring it up to date.
		return w.saveRecord(ctx, rec)
	}
	return nil
}

// fitStatus renders the status comment of issue n with record rec, within what GitHub takes (record.Fit).
// f is what the run knows of the issue besides its record (Facts.Unowned).
func fitStatus(t *table, n int, rec Record, cfg config.Config, links Links, f Facts) (string, Record) {
	return record.Fit(rec, func(r Record) string { return t.renderStatus(n, r, cfg, links, f) })
}

// Status refreshes the status comment and answers with a short reply pointing at it.
func (e *Engine) Status(ctx context.Context, n int, reply bool) (Record, error) {
	ic, err := e.reader().load(ctx, n, "")
	if err != nil {
		return Record{}, err
	}
	if ic.state == "" {
		return Record{}, inputErrorf("#%d is not enrolled: add the %s label to start", n, workflow.LabelBuild)
	}
	// Who added ralph:build matters when a step could run now: no sweep takes an issue whose label counts
	// for nobody, and the comment must not say ralph goes on by itself.
	if lb, ok := e.GitHub.(LabelerReader); ok && ic.enrollable() && ic.gh.State == "open" {
		if d := Next(n, ic.rec, true, Facts{Blockers: []int{}}, e.Config); d.Now() && !d.Running {
			if ic.unowned, ic.labeler, err = Unowned(ctx, lb, e.Auth, ic.gh, ic.trusted); err != nil {
				return ic.rec, err
			}
		}
	}
	if e.DryRun {
		return ic.rec, nil
	}
	if err := e.writer(ic).saveStatus(ctx); err != nil {
		return ic.rec, err
	}
	if reply && ic.status != nil {
		_, err = e.GitHub.CreateComment(ctx, n, fmt.Sprintf("ralph: #%d is **%s**. Details: %s", n, ic.state.Title(), ic.status.HTMLURL))
	}
	return ic.rec, err
}

// Links are the web links the status comment shows.
type Links struct {
	Branch string
	// Docs is ralph's documents branch, when the documents are kept apart (docs.go).
	Docs string
	Run  string
}

func (w writer) links() Links {
	l := Links{Run: w.runURL}
	if w.ic.rec.Branch != "" && w.ic.rec.Base != "" {
		l.Branch = w.gh.TreeURL(w.ic.rec.Branch)
	}
	if w.ic.rec.Docs != "" {
		l.Docs = w.gh.TreeURL(w.ic.rec.Docs)
	}
	return l
}

// renderStatus renders the status comment: state at a glance, checklist, phases, links, last run, what a
// person can do, the workflow diagram, and the hidden record.
func (t *table) renderStatus(n int, rec Record, cfg config.Config, links Links, f Facts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## ralph: %s\n\n", rec.State.Title())
	if rec.State == workflow.HumanNeeded && rec.Reason != "" {
		fmt.Fprintf(&b, "> [!WARNING]\n> **A person is needed.** %s\n\n", Inert(rec.Reason))
	}
	if rec.Repair != "" {
		fmt.Fprintf(&b, "> [!NOTE]\n> **Labels repaired.** %s\n\n", Inert(rec.Repair))
	}
	if w := rec.Waiting; w != nil {
		fmt.Fprintf(&b, "> [!NOTE]\n> **%s** %s\n\n", Inert(w.Headline()), w.Detail(n))
	}

	b.WriteString("### Steps\n\n")
	for _, it := range t.checklist(rec, cfg) {
		mark := " "
		if it.done {
			mark = "x"
		}
		fmt.Fprintf(&b, "- [%s] %s\n", mark, it.text)
	}

	if len(rec.Phases) > 0 {
		fmt.Fprintf(&b, "\n### Phases (%d of %d done)\n\n", rec.PhasesDone(), len(rec.Phases))
		for i, p := range rec.Phases {
			mark, sha := " ", ""
			if p.SHA != "" {
				mark, sha = "x", " — "+short(p.SHA)
			}
			if p.CostUSD > 0 {
				sha += fmt.Sprintf(" ($%.4f)", p.CostUSD)
			}
			fmt.Fprintf(&b, "- [%s] Phase %d: %s%s\n", mark, i+1, Inert(p.Title), sha)
		}
	}

	if len(rec.Children) > 0 {
		b.WriteString("\n### Sub-issues\n\nThis issue was split into sub-issues; it moves to In Review when all are In Review or Done, and to Done when all are Done.\n\n")
		for _, c := range rec.Children {
			st := workflow.State(rec.ChildStates[strconv.Itoa(c)])
			mark, title := " ", "not started"
			if st != "" {
				title = st.Title()
			}
			if st == workflow.Done || st == workflow.Canceled {
				mark = "x"
			}
			fmt.Fprintf(&b, "- [%s] #%d — %s", mark, c, title)
			if deps := rec.ChildDeps[strconv.Itoa(c)]; len(deps) > 0 {
				b.WriteString(" (after")
				for _, d := range deps {
					fmt.Fprintf(&b, " #%d", d)
				}
				b.WriteString(")")
			}
			b.WriteString("\n")
		}
	}

	b.WriteString("\n### Links\n\n")
	if rec.Parent != 0 {
		fmt.Fprintf(&b, "- Part of #%d\n", rec.Parent)
	}
	if rec.Branch != "" {
		if links.Branch != "" {
			fmt.Fprintf(&b, "- Branch: [%s](%s)\n", ownCode(rec.Branch), link(links.Branch))
		} else {
			fmt.Fprintf(&b, "- Branch: %s\n", ownCode(rec.Branch))
		}
	}
	if rec.Docs != "" {
		// Kept apart (documents: separate): out of the pull request, on ralph's own branch.
		if links.Docs != "" {
			fmt.Fprintf(&b, "- Documents: [%s](%s) (kept out of the pull request)\n", ownCode(rec.Docs), link(links.Docs))
		} else {
			fmt.Fprintf(&b, "- Documents: %s (kept out of the pull request)\n", ownCode(rec.Docs))
		}
	}
	for _, doc := range t.documents() {
		a, ok := rec.Artifacts[doc.Kind]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "- %s:", doc.Title)
		if a.URL != "" {
			fmt.Fprintf(&b, " [%s](%s)", ownCode(a.Path), link(a.URL))
		}
		if a.Comment != "" {
			fmt.Fprintf(&b, " ([comment](%s))", link(a.Comment))
		}
		if a.Verdict != "" {
			fmt.Fprintf(&b, " — %s", Inert(a.Verdict))
		}
		b.WriteString("\n")
	}
	if rec.PRURL != "" {
		fmt.Fprintf(&b, "- Pull request: #%d (%s)\n", rec.PR, link(rec.PRURL))
	}
	if rec.ReviewRounds > 0 || rec.CIFixes > 0 {
		fmt.Fprintf(&b, "- Fixes after the pull request: %d for reviews, %d of %d for failing checks (`ci.max_fixes`)\n", rec.ReviewRounds, rec.CIFixes, cfg.CI.MaxFixes)
	}
	b.WriteString(requiredSection(rec))
	if rec.PR != 0 && rec.ChecksBlocked {
		b.WriteString("\n> [!NOTE]\n> This pull request was opened with the Actions token, so GitHub runs no `pull_request` workflow on it: " +
			"your checks do not run until someone pushes to its branch, and ralph has no failing check to answer. " +
			"Give ralph a GitHub App's token to have them run (README: CI on ralph's pull requests).\n")
	}

	if rec.Last != nil {
		l := rec.Last
		b.WriteString("\n### Last run\n\n")
		when := l.At.Format("2006-01-02 15:04 UTC")
		what := l.Message
		if l.URL != "" {
			fmt.Fprintf(&b, "[%s](%s): ", when, link(l.URL))
		} else {
			fmt.Fprintf(&b, "%s: ", when)
		}
		fmt.Fprintf(&b, "**%s** — %s\n", Inert(l.Outcome), Inert(what))
		if a := rec.Attempt; a != nil && rec.State != workflow.HumanNeeded {
			fmt.Fprintf(&b, "\nThe agent is working on %s (attempt %d of %d in a row; counted as a failure until its outcome is recorded).\n", a.Step, rec.Failures, cfg.MaxFailures)
		} else if rec.Failures > 0 && rec.State != workflow.HumanNeeded {
			fmt.Fprintf(&b, "\n%s has failed %s in a row (a person is called after %d).\n", rec.FailedStep, plural(rec.Failures, "time", "times"), cfg.MaxFailures)
		}
	}

	b.WriteString(refusedSection(rec))
	b.WriteString(usageSection(rec, cfg))

	fmt.Fprintf(&b, "\n### What you can do\n\n%s\n", t.next(n, rec, true, Facts{Blockers: []int{}, Unowned: f.Unowned, Labeler: f.Labeler}, cfg).Actions())

	fmt.Fprintf(&b, "\n<details><summary>Workflow</summary>\n\n```mermaid\n%s\n```\n</details>\n\n", strings.TrimSpace(t.flow.Mermaid(rec.State)))
	// ralph's marker first, its record last, and between them nothing that can pass for either.
	return record.StatusMarker + "\n" + unmarked(b.String()) + record.Encode(rec) + "\n"
}

// requiredSection lists the checks the base's rules require that had not passed on ralph's last commit when
// ralph last read them (the commit is named: a fix pushed since is not judged yet): they block the merge. Nothing when all passed or none is required.
func requiredSection(rec Record) string {
	if rec.PR == 0 {
		return ""
	}
	var b strings.Builder
	for _, c := range rec.Required {
		if c.State == "passing" {
			continue
		}
		what := map[string]string{
			"failing": "failing",
			"pending": "pending (not finished)",
			"missing": "missing (no run reported on the commit)",
		}[c.State]
		fmt.Fprintf(&b, "- %s: %s\n", Inert(c.Name), what)
	}
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("\n### Required checks\n\nThe base's rules require these checks to pass before the merge; on %s they were:\n\n%s", ownCode(short(rec.RequiredOn)), b.String())
}
