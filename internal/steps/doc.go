// Package steps is ralph's workflow: each step declared once, in its own file, beside its run function
// (research.go, plan.go, review.go, triage.go, children.go, fix.go, implement.go, selfreview.go,
// security.go, pr.go, merge.go); the table built from the declarations (table.go, steps.go); the planner,
// which reads that table and an issue's record to say what happens next (planner.go); and the status
// comment's parts that come from the workflow (status.go).
//
// A step runs on a Runner (runner.go) that the engine makes for it: the issue as it stood when the step
// began (Issue, a copy), the agent's Session, the Writer for ralph's own comments, and the People
// who may drive ralph. What a step changes of the record it changes on its draft; what it came to, it
// returns as an Outcome, which the engine settles and writes. The step's tools are here too: a document
// written, committed and posted (document.go, docs.go), a phase run, verified and committed (phase.go),
// the prompt's data (prompt.go).
package steps
