package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/rules"
	"github.com/ralph-dev/gh-ralph/internal/steps"
)

// RuleReader reads the rules of a branch (steps.RuleReader).
type RuleReader = steps.RuleReader

// RulesError is a run stopped before it changed anything because a repository rule would refuse its work.
type RulesError struct {
	Issue   int
	Branch  string
	Refused []rules.Verdict
}

func (e *RulesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d: the repository's rules would refuse ralph's work on %s, so nothing was run or changed:", e.Issue, e.Branch)
	for _, v := range e.Refused {
		fmt.Fprintf(&b, "\n- %s: %s; to fix: %s", v.Name(), v.Why, v.Remedy)
	}
	return b.String()
}

// ruleWork is what the step about to run will do on the issue's branch, for the rules to judge.
func (e *Engine) ruleWork(ic issue) rules.Work {
	return e.table().RuleWork(e.Config, e.Signing, ic.n, ic.gh.Title, ic.rec)
}

// RuleWork is what ralph does on issue n's branch, for the repository's rules to judge (steps.RuleWork).
func RuleWork(cfg config.Config, s Signing, n int, title string, rec Record) rules.Work {
	return workflowTable().RuleWork(cfg, s, n, title, rec)
}

// DocsRuleWork is what ralph does on issue n's documents branch, when its documents are kept apart
// (steps.DocsRuleWork).
func DocsRuleWork(cfg config.Config, s Signing, n int, title string, rec Record) (w rules.Work, ok bool) {
	return workflowTable().DocsRuleWork(cfg, s, n, title, rec)
}

// checkRules reads the rules of the issue's branch before step st runs its agent, and returns a *RulesError
// when one would refuse the step's work. A step with no agent, or one whose work stays off the branch (triage),
// reads nothing. Rules ralph cannot read are a warning: a push they refuse is still reported with its rule.
//
// The rules are read where they can refuse: by the steps before ralph's first push to the branch (which
// creates it), and, after a rule refused a push (GH013, Record.RulesRefused), by each step until one
// succeeds. Any other step pushes without reading them, a request saved: a rule added meanwhile refuses
// its push, which is reported with the rule, and the retry reads the rules first.
func (e *Engine) checkRules(ctx context.Context, ic issue, st *Step) error {
	rr, ok := e.GitHub.(RuleReader)
	if !ok || !st.Agent(e.Config) || (st.Doc != nil && st.Doc.Folder == "") || ic.rec.Branch == "" {
		return nil
	}
	var works []rules.Work
	if docs, apart := e.table().DocsRuleWork(e.Config, e.Signing, ic.n, ic.gh.Title, ic.rec); apart && st.Doc != nil {
		// A document step of an issue whose documents are kept apart pushes to the documents branch alone:
		// both branches' rules are read before its first document there, so that a rule that would refuse
		// the phases stops the issue before any agent runs.
		if ic.rec.DocsHead == "" || ic.rec.RulesRefused {
			works = []rules.Work{docs, e.ruleWork(ic)}
		}
	} else if ic.rec.Head == "" || ic.rec.RulesRefused {
		works = []rules.Work{e.ruleWork(ic)}
	}
	for _, w := range works {
		rs, err := rr.BranchRules(ctx, w.Branch)
		if err != nil {
			e.Log.Warnf("#%d: reading the repository's rules for %s: %v (a push they refuse is reported when it happens)", ic.n, w.Branch, err)
			continue
		}
		if bad := rules.Refusals(rules.Judge(rs, w)); len(bad) > 0 {
			for i := range bad {
				// The rule's parameters and source are others' text: rendered inert wherever they are shown.
				bad[i].Why, bad[i].Rule.Source = inert.String(bad[i].Why), inert.String(bad[i].Rule.Source)
			}
			return &RulesError{Issue: ic.n, Branch: w.Branch, Refused: bad}
		}
	}
	return nil
}
