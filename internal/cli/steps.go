package cli

import (
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/engine"
)

// stepFields are the --json fields of advance, sweep and enroll: one object per step run (or issue a
// sweep passed over), the text's columns by name.
var stepFields = []string{"number", "step", "from", "state", "outcome", "pullRequest", "message"}

// stepOutcomes are the outcomes a step is reported with.
const stepOutcomes = `done, failed, held (another run holds the issue), waiting (for a
person), nothing (no step to run), budget (a budget stopped it), dry-run`

// stepColumns documents the text output and --json of the commands that run steps.
const stepColumns = `Off a terminal each step is one line of tab-separated fields: issue, step, from (the state
before), to (the state after), outcome, pull request, message. outcome is one of ` + stepOutcomes + `.
--json FIELDS, --jq and --template work as in gh; the JSON fields are number, step, from, state (the
state after), outcome, pullRequest and message.`

// stepOutcome names how a step ended, for both the text and --json.
func stepOutcome(res engine.Result, err error) string {
	outcome := "done"
	switch {
	case err != nil:
		outcome = "failed"
	case res.Held:
		outcome = "held"
	case res.Step == "" && res.Paused:
		outcome = "waiting"
	case res.Step == "":
		outcome = "nothing"
	case res.Budget != "":
		outcome = "budget"
	}
	if strings.HasPrefix(res.Message, "would ") {
		outcome = "dry-run"
	}
	return outcome
}

// stepJSON is one step in --json's fields. The message may quote what others wrote: write makes every
// string inert.
func stepJSON(res engine.Result, err error) map[string]any {
	return map[string]any{
		"number": res.Issue, "step": string(res.Step), "from": string(res.From), "state": string(res.State),
		"outcome": stepOutcome(res, err), "pullRequest": res.PRURL, "message": oneLine(res.Message),
	}
}

// stepOutput prints each step as it ends, or keeps it for --json, which is written once, whole.
type stepOutput struct {
	f    *Factory
	exp  *exporter
	list []map[string]any
}

func (o *stepOutput) add(res engine.Result, err error) {
	if o.exp.enabled() {
		o.list = append(o.list, o.exp.pick(stepJSON(res, err)))
		return
	}
	printResult(o.f.Stdout, o.f.StdoutTTY, colorizer(o.f.Color), res, err)
}

// addJSON keeps an object for --json only (an issue passed over, one that was only labeled).
func (o *stepOutput) addJSON(obj map[string]any) {
	if o.exp.enabled() {
		o.list = append(o.list, o.exp.pick(obj))
	}
}

// flush writes --json's list: after the steps ran, or with none when the command ended well; a command
// that failed before any step writes nothing, only its error.
func (o *stepOutput) flush(err error) error {
	if !o.exp.enabled() || (len(o.list) == 0 && err != nil) {
		return err
	}
	list := o.list
	if list == nil {
		list = []map[string]any{}
	}
	if werr := o.exp.write(o.f.Stdout, list, o.f.StdoutTTY, o.f.Width); werr != nil && err == nil {
		return werr
	}
	return err
}
