package record

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Links are the web links the status comment shows.
type Links struct {
	Branch string
	// Docs is ralph's documents branch, when the documents are kept apart (the engine's docs.go).
	Docs string
	Run  string
}

// Parts is what the status comment shows of the workflow, which the engine owns (its table of steps, its
// planner, the agent's session); Render asks for each with the record it renders.
type Parts interface {
	// Checklist is the steps' checklist for rec.
	Checklist(rec Record) []Item
	// Documents are the kinds of document the steps write, in the workflow's order.
	Documents() []Doc
	// Actions is what a person can do now.
	Actions(rec Record) string
	// Diagram is the workflow's Mermaid diagram, the state st marked.
	Diagram(st workflow.State) string
	// Sections are the agent session's sections: the hosts it was refused, what it used.
	Sections(rec Record) string
}

// Item is a line of the checklist.
type Item struct {
	Done bool
	Text string
}

// Doc is a kind of document a step writes, as the status comment lists it.
type Doc struct {
	Kind, Title string
}

// Render renders the status comment of issue n: state at a glance, checklist, phases, links, last run, what
// a person can do, the workflow diagram, and the hidden record. Every text of others in rec is quoted
// inert; Fit bounds what it renders.
func Render(n int, rec Record, cfg config.Config, links Links, wf Parts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## ralph: %s\n\n", rec.State.Title())
	if rec.State == workflow.HumanNeeded && rec.Reason != "" {
		fmt.Fprintf(&b, "> [!WARNING]\n> **A person is needed.** %s\n\n", inert.GitHub(rec.Reason))
	}
	if rec.Repair != "" {
		fmt.Fprintf(&b, "> [!NOTE]\n> **Labels repaired.** %s\n\n", inert.GitHub(rec.Repair))
	}
	if w := rec.Waiting; w != nil {
		fmt.Fprintf(&b, "> [!NOTE]\n> **%s** %s\n\n", inert.GitHub(w.Headline()), w.Detail(n))
	}

	b.WriteString("### Steps\n\n")
	for _, it := range wf.Checklist(rec) {
		mark := " "
		if it.Done {
			mark = "x"
		}
		fmt.Fprintf(&b, "- [%s] %s\n", mark, it.Text)
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
			fmt.Fprintf(&b, "- [%s] Phase %d: %s%s\n", mark, i+1, inert.GitHub(p.Title), sha)
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
			fmt.Fprintf(&b, "- Branch: [%s](%s)\n", inert.Code(rec.Branch), inert.Link(links.Branch))
		} else {
			fmt.Fprintf(&b, "- Branch: %s\n", inert.Code(rec.Branch))
		}
	}
	if rec.Docs != "" {
		// Kept apart (documents: separate): out of the pull request, on ralph's own branch.
		if links.Docs != "" {
			fmt.Fprintf(&b, "- Documents: [%s](%s) (kept out of the pull request)\n", inert.Code(rec.Docs), inert.Link(links.Docs))
		} else {
			fmt.Fprintf(&b, "- Documents: %s (kept out of the pull request)\n", inert.Code(rec.Docs))
		}
	}
	for _, doc := range wf.Documents() {
		a, ok := rec.Artifacts[doc.Kind]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "- %s:", doc.Title)
		if a.URL != "" {
			fmt.Fprintf(&b, " [%s](%s)", inert.Code(a.Path), inert.Link(a.URL))
		}
		if a.Comment != "" {
			fmt.Fprintf(&b, " ([comment](%s))", inert.Link(a.Comment))
		}
		if a.Verdict != "" {
			fmt.Fprintf(&b, " — %s", inert.GitHub(a.Verdict))
		}
		b.WriteString("\n")
	}
	if rec.PRURL != "" {
		fmt.Fprintf(&b, "- Pull request: #%d (%s)\n", rec.PR, inert.Link(rec.PRURL))
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
			fmt.Fprintf(&b, "[%s](%s): ", when, inert.Link(l.URL))
		} else {
			fmt.Fprintf(&b, "%s: ", when)
		}
		fmt.Fprintf(&b, "**%s** — %s\n", inert.GitHub(l.Outcome), inert.GitHub(what))
		if a := rec.Attempt; a != nil && rec.State != workflow.HumanNeeded {
			fmt.Fprintf(&b, "\nThe agent is working on %s (attempt %d of %d in a row; counted as a failure until its outcome is recorded).\n", a.Step, rec.Failures, cfg.MaxFailures)
		} else if rec.Failures > 0 && rec.State != workflow.HumanNeeded {
			fmt.Fprintf(&b, "\n%s has failed %s in a row (a person is called after %d).\n", rec.FailedStep, plural(rec.Failures, "time", "times"), cfg.MaxFailures)
		}
	}

	b.WriteString(wf.Sections(rec))

	fmt.Fprintf(&b, "\n### What you can do\n\n%s\n", wf.Actions(rec))

	fmt.Fprintf(&b, "\n<details><summary>Workflow</summary>\n\n```mermaid\n%s\n```\n</details>\n\n", strings.TrimSpace(wf.Diagram(rec.State)))
	// ralph's marker first, its record last, and between them nothing that can pass for either.
	return StatusMarker + "\n" + inert.Unmarked(b.String()) + Encode(rec) + "\n"
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
		fmt.Fprintf(&b, "- %s: %s\n", inert.GitHub(c.Name), what)
	}
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("\n### Required checks\n\nThe base's rules require these checks to pass before the merge; on %s they were:\n\n%s", inert.Code(short(rec.RequiredOn)), b.String())
}

// short is a commit id as people read it: its first seven characters.
func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// plural is "1 time", "2 times": n and the word for it.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
