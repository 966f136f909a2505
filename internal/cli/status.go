package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cli/go-gh/v2/pkg/tableprinter"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/view"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// StatusOptions are `gh ralph status`'s.
type StatusOptions struct {
	Repo     string
	Issue    int // 0: the pipeline
	Stale    time.Duration
	Exporter exporter
}

// The fields `status N --json` and `status --json` take.
var (
	issueFields    = []string{"number", "title", "url", "open", "state", "running", "phase", "lock", "iterations", "failures", "artifacts", "branch", "pullRequest", "lastRun", "next", "reason", "updatedAt", "usage", "fixes", "waiting", "warnings"}
	pipelineFields = []string{"number", "title", "url", "state", "ready", "since", "updatedAt", "usage", "warnings"}
)

// NewCmdStatus builds `gh ralph status [N]`.
func NewCmdStatus(f *Factory, runF func(context.Context, *StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{}
	cmd := &cobra.Command{
		Use:   "status [<issue>]",
		Short: "Show where an issue is, or the whole pipeline",
		Long: `With an issue number: its state, phase k of M, lock, plan and self-review iterations,
failures, artifacts, branch, pull request, last run and next step, read from the issue's labels
and its status comment. Nothing is written (the comment /ralph status refreshes it instead).

Without: the pipeline — every enrolled open issue by state, with what the agent has cost it so
far, and warnings for issues that have been in one state longer than --stale, issues in a lock
state for over an hour (a run that stopped without finishing), issues that need a person, and
issues whose ralph:build label someone without write access added (no sweep takes them until someone
with write access runs gh ralph enroll N).

On a terminal the output is a table; otherwise it is stable tab-separated text. --json FIELDS,
--jq and --template work as in gh (--json alone lists the fields). usage is what the agent
reported: turns, tokens and cost, in total and per step.

JSON fields of one issue: number, title, url, open, state, running, phase, lock, iterations, failures,
artifacts, branch, pullRequest, lastRun, next, reason, updatedAt, usage, fixes, warnings.
JSON fields of the pipeline: number, title, url, state, ready, since, updatedAt, usage, warnings.`,
		Example: `  $ gh ralph status
  $ gh ralph status 47
  $ gh ralph status 47 --json state,phase --jq '.phase.done'
  $ gh ralph status --json number,state,warnings
  $ gh ralph status --template '{{range .}}{{.number}} {{.state}}{{"\n"}}{{end}}' --json number,state`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			return issueArg(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo, _ = cmd.Flags().GetString("repo")
			fields := pipelineFields
			if len(args) == 1 {
				opts.Issue, _ = parseIssue(args[0])
				fields = issueFields
			}
			if err := opts.Exporter.check(cmd, fields); err != nil {
				return otherFields(err, opts.Exporter.Fields, len(args) == 1)
			}
			if opts.Stale <= 0 {
				return flagErrorf(cmd, "--stale must be more than zero")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return statusRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Stale, "stale", 72*time.Hour, "Warn about issues in one state for longer than `duration`")
	addJSONFlags(cmd, &opts.Exporter, union(issueFields, pipelineFields))
	// --json with no fields lists those of the form asked for, one issue's or the pipeline's, as gh lists a
	// command's: the arguments parsed before the flag say which.
	both := cmd.FlagErrorFunc()
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c != cmd || !strings.Contains(err.Error(), "flag needs an argument: --json") {
			return both(c, err)
		}
		fields := pipelineFields
		if len(c.Flags().Args()) > 0 {
			fields = issueFields
		}
		return &jsonFieldsError{fields: slices.Sorted(slices.Values(fields))}
	})
	cmd.ValidArgsFunction = issueCompletion(f)
	addRepoFlag(cmd)
	return cmd
}

// otherFields explains a --json field that belongs to the other form of status (one issue, or the
// pipeline), instead of calling it unknown.
func otherFields(err error, asked []string, oneIssue bool) error {
	var fe *jsonFieldsError
	if !errors.As(err, &fe) {
		return err
	}
	other, form, how := issueFields, "one issue's status", "gh ralph status <issue> --json "
	if oneIssue {
		other, form, how = pipelineFields, "the pipeline", "gh ralph status --json "
	}
	own := pipelineFields
	if oneIssue {
		own = issueFields
	}
	for _, f := range asked {
		if slices.Contains(other, f) && !slices.Contains(own, f) {
			fe.msg = fmt.Sprintf("%q is a field of %s: %s%s", f, form, how, strings.Join(asked, ","))
			return fe
		}
	}
	return err
}

func union(a, b []string) []string {
	out := append([]string{}, a...)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func statusRun(ctx context.Context, f *Factory, opts *StatusOptions) error {
	s, err := f.session(opts.Repo)
	if err != nil {
		return err
	}
	// status only reads: with a config it cannot use, it shows what it reads with ralph's defaults, then
	// the config's error (and exits as that error does).
	cfg, cfgErr := s.configOrDefault(ctx)
	if cfgErr != nil {
		cfg = config.Default()
	}
	if err := statusShow(ctx, f, s, cfg, opts); err != nil {
		return err
	}
	if cfgErr != nil {
		fmt.Fprintln(f.Stderr, "the status above was read with ralph's defaults: the repository's config has an error")
	}
	return cfgErr
}

func statusShow(ctx context.Context, f *Factory, s *session, cfg config.Config, opts *StatusOptions) error {
	if opts.Issue == 0 {
		return pipelineRun(ctx, f, s, cfg, opts)
	}
	v, err := view.Read(ctx, s.gh, cfg, opts.Issue, view.Watch{Now: f.now(), Stale: opts.Stale})
	if err != nil {
		return err
	}
	st := &issueStatus{Issue: *v, Config: cfg}
	if opts.Exporter.enabled() {
		return opts.Exporter.write(f.Stdout, opts.Exporter.pick(st.fields()), f.StdoutTTY, f.Width)
	}
	st.print(f.Stdout, f.StdoutTTY, f.Color)
	return nil
}

// issueStatus is what status prints of one issue: ralph's view of it, and the config it is read with.
type issueStatus struct {
	view.Issue
	Config config.Config
}

// usageJSON is what the agent reported, in total and per step (the record keeps the last 20 runs), in
// the keys of the rest of --json (usageFields).
func usageJSON(rec record.Record) map[string]any {
	total := agent.Usage{}
	if rec.Usage != nil {
		total = *rec.Usage
	}
	steps := []any{}
	for _, r := range rec.History {
		if r.Usage == nil {
			continue
		}
		step := usageFields(*r.Usage)
		step["step"], step["at"], step["outcome"] = r.Step, r.At, r.Outcome
		steps = append(steps, step)
	}
	usage := usageFields(total)
	usage["steps"] = steps
	return usage
}

// usageFields is one usage in --json's lowerCamelCase keys; agent.Usage's own JSON (snake_case) is the
// record's, on GitHub, and stays as it is. stoppedBy names the budget that stopped the run ("step",
// "issue", "day"); an issue's usage.budget is the budgets themselves.
func usageFields(u agent.Usage) map[string]any {
	return map[string]any{"turns": u.Turns, "requests": u.Requests, "inputTokens": u.InputTokens, "cacheReadTokens": u.CacheReadTokens,
		"cacheWriteTokens": u.CacheWriteTokens, "outputTokens": u.OutputTokens, "costUSD": u.CostUSD, "model": u.Model,
		"metered": u.Metered, "hitTurnLimit": u.HitTurnLimit, "overBudget": u.OverBudget, "stoppedBy": u.Budget}
}

// costText is an issue's usage in a few characters: the cost when the agent reports one, else tokens.
func costText(u *agent.Usage) string {
	switch {
	case u == nil:
		return "—"
	case u.CostUSD > 0:
		return fmt.Sprintf("$%.2f", u.CostUSD)
	case u.InputTokens+u.OutputTokens > 0:
		return fmt.Sprintf("%s tokens", shortCount(u.InputTokens+u.OutputTokens))
	}
	return "—"
}

func shortCount(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// fields is every --json field of one issue.
func (st *issueStatus) fields() map[string]any {
	rec := st.Record
	// The step under way, as the text's running line says it; null: none.
	var running any
	if r := st.running(); r != "" {
		running = string(r)
	}
	var pr any
	if rec.PR != 0 {
		pr = map[string]any{"number": rec.PR, "url": rec.PRURL}
	}
	var last any
	if rec.Last != nil {
		last = map[string]any{"step": rec.Last.Step, "from": rec.Last.From, "to": rec.Last.To, "at": rec.Last.At, "url": rec.Last.URL, "outcome": rec.Last.Outcome, "message": rec.Last.Message}
	}
	artifacts := map[string]any{}
	for k, a := range rec.Artifacts {
		artifacts[k] = map[string]any{"path": a.Path, "url": a.URL, "comment": a.Comment, "verdict": a.Verdict}
	}
	warnings := st.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	// What the agent used, from the record (ralph's model gateway's figures when it ran: metered): the
	// totals and each step's, the whole record (total), the last run's, and the budgets.
	usage := usageJSON(rec)
	usage["total"], usage["lastRun"] = nil, nil
	if rec.Usage != nil {
		usage["total"] = usageFields(*rec.Usage)
	}
	usage["budget"] = map[string]any{"step": st.Config.Agent.MaxCost, "stepTokens": st.Config.Agent.MaxTokens, "issue": st.Config.Budget.Issue, "day": st.Config.Budget.Day}
	if rec.Last != nil && rec.Last.Usage != nil {
		usage["lastRun"] = usageFields(*rec.Last.Usage)
	}
	return map[string]any{
		"number": st.Number, "title": st.Title, "url": st.URL, "open": st.Open,
		"state": string(st.State), "running": running, "phase": st.Phases(), "lock": st.Lock,
		"iterations": map[string]any{"plan": rec.PlanIterations, "selfReview": rec.ReviewIterations, "max": st.Config.MaxIterations},
		"failures":   map[string]any{"step": rec.FailedStep, "count": rec.Failures, "max": st.Config.MaxFailures},
		"artifacts":  artifacts, "branch": rec.Branch, "pullRequest": pr, "lastRun": last,
		"next": st.Next(st.Config), "reason": rec.Reason, "updatedAt": st.UpdatedAt, "usage": usage, "warnings": warnings,
		// The rounds after the pull request (the fix step).
		"fixes": fixesJSON(rec, st.Config.CI.MaxFixes),
		// A run whose dispatch was lost: the issue waits for the next sweep; null: none.
		"waiting": waitingJSON(rec.Waiting),
	}
}

// waitingJSON is --json waiting: since when the issue waits for a sweep, and the step whose run was not
// started (finish: the run that was to finish it); nil when it does not wait.
func waitingJSON(w *record.SweepWait) any {
	if w == nil {
		return nil
	}
	return map[string]any{"since": w.Since, "step": w.Step, "finish": w.Finish}
}

// fixesJSON is --json fixes: the rounds after the pull request (the fix step), reviews answered, checks
// fixed of the cap, whether one is under way, and each fix phase with what its agent cost.
func fixesJSON(rec record.Record, maxChecks int) map[string]any {
	phases := []map[string]any{}
	for _, p := range rec.Phases {
		if p.Fix {
			phases = append(phases, map[string]any{"title": p.Title, "sha": p.SHA, "costUSD": p.CostUSD})
		}
	}
	return map[string]any{"reviews": rec.ReviewRounds, "checks": rec.CIFixes, "maxChecks": maxChecks, "pending": rec.Fix != nil, "phases": phases}
}

// running is the step under way, the one value behind the text's running line and --json running: the
// state its label shows (Research in Progress) while a live run holds the issue, or, before that run put
// the label on, the one its step puts on from the record's state; "" when no live run holds the issue (a
// running label alone is a warning of the view's) or its step cannot be told (the lock line says who
// holds it).
func (st *issueStatus) running() workflow.State {
	if st.Lock == nil || st.Lock.Expired {
		return ""
	}
	if st.Running != "" {
		return st.Running
	}
	from := st.State
	if from == "" {
		from = engine.FirstState(st.Config)
	}
	for _, t := range engine.Transitions() {
		if t.Event == workflow.Start && t.From == from {
			return t.To
		}
	}
	return ""
}

// print writes the issue's status: aligned for people on a terminal, "key<TAB>value" lines otherwise.
func (st *issueStatus) print(w io.Writer, tty, color bool) {
	rec := st.Record
	c := colorizer(color)
	var rows [][2]string
	// Every value is made inert (it holds what others wrote: the title, phase titles, reasons, warnings);
	// ralph's colour comes after.
	addColored := func(k, v string, color func(string) string) {
		rows = append(rows, [2]string{k, color(inert.String(v))})
	}
	add := func(k, v string) { addColored(k, v, func(s string) string { return s }) }
	add("issue", fmt.Sprintf("#%d %s", st.Number, st.Title))
	add("url", st.URL)
	state := st.State.Title()
	if st.State == "" {
		state = "enrolled, not started"
	}
	if !st.Open {
		state += " (issue closed)"
	}
	addColored("state", state, func(s string) string { return c.state(st.State, s) })
	held := st.Lock != nil && !st.Lock.Expired
	if r := st.running(); r != "" {
		// A run holds the issue: its step is under way (its label, Research in Progress, is expected).
		v := fmt.Sprintf("%s, by %s", r.Title(), st.Lock.Holder)
		if !st.Lock.Since.IsZero() {
			v += " since " + st.Lock.Since.UTC().Format("15:04 UTC")
		}
		addColored("running", v, func(s string) string { return c.wrap("36", s) })
	}
	if p := st.Phases(); p.Total > 0 {
		v := fmt.Sprintf("%d of %d", p.Done, p.Total)
		if p.Next != "" {
			v += " (next: " + p.Next + ")"
		}
		add("phase", v)
	} else {
		add("phase", "no plan yet")
	}
	switch l := st.Lock; {
	case l == nil:
		add("lock", "none")
	case l.Since.IsZero():
		add("lock", l.Holder)
	default:
		v := fmt.Sprintf("%s since %s, lease until %s", l.Holder, l.Since.UTC().Format("15:04 UTC"), l.Expires.UTC().Format("15:04 UTC"))
		if l.Expired {
			v += " (expired)"
		}
		add("lock", v)
	}
	add("iterations", fmt.Sprintf("plan sent back %d of %d, self-review sent back %d of %d", rec.PlanIterations, st.Config.MaxIterations, rec.ReviewIterations, st.Config.MaxIterations))
	switch {
	case rec.Attempt != nil:
		// Written before the agent started: the attempt counts as a failure until its outcome is recorded.
		add("failures", fmt.Sprintf("%s: attempt %d of %d in a row under way (counted as a failure until its outcome is recorded)", rec.Attempt.Step, rec.Failures, st.Config.MaxFailures))
	case rec.Failures > 0:
		add("failures", fmt.Sprintf("%s failed %d of %d times in a row", rec.FailedStep, rec.Failures, st.Config.MaxFailures))
	default:
		add("failures", "none")
	}
	for _, k := range engine.DocumentKinds() {
		a, ok := rec.Artifacts[k]
		if !ok {
			continue
		}
		v := a.Path
		if a.Verdict != "" {
			v += " — " + a.Verdict
		}
		if a.URL != "" {
			v += " " + a.URL
		}
		add(k, v)
	}
	add("branch", orNone(rec.Branch))
	if rec.PR != 0 {
		add("pull request", fmt.Sprintf("#%d %s", rec.PR, rec.PRURL))
	} else {
		add("pull request", "none")
	}
	if l := rec.Last; l != nil {
		v := fmt.Sprintf("%s %s — %s", l.At.UTC().Format("2006-01-02 15:04 UTC"), l.Outcome, oneLine(l.Message))
		if l.URL != "" {
			v += " " + l.URL
		}
		add("last run", v)
	}
	if w := rec.Waiting; w != nil {
		addColored("waiting", fmt.Sprintf("%s GitHub did not take its dispatch (%s); the next sweep takes #%d first", w.Headline(), w.Since.UTC().Format("2006-01-02 15:04 UTC"), st.Number), c.warn)
	}
	if rec.Reason != "" && st.State == workflow.HumanNeeded {
		add("reason", oneLine(rec.Reason))
	}
	if rec.Usage != nil {
		v := rec.Usage.String()
		if rec.Usage.Metered {
			v += " (metered by ralph's model gateway)"
		}
		if b := st.Config.Budget.Issue; b > 0 {
			v += fmt.Sprintf("; budget.issue $%.2f", b)
		}
		add("agent usage", v)
	}
	if held {
		add("next", fmt.Sprintf("the run under way ends its step; gh ralph status %d then says what follows", st.Number))
	} else {
		add("next", st.Next(st.Config))
	}
	for _, warn := range st.Warnings {
		addColored("warning", warn, c.warn)
	}
	if !tty {
		for _, r := range rows {
			fmt.Fprintf(w, "%s\t%s\n", r[0], r[1])
		}
		return
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s  %s\n", c.bold(fmt.Sprintf("%-*s", width+1, r[0]+":")), r[1])
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func pipelineRun(ctx context.Context, f *Factory, s *session, cfg config.Config, opts *StatusOptions) error {
	now := f.now()
	items, err := view.Pipeline(ctx, s.gh, cfg, view.Watch{Now: now, Stale: opts.Stale})
	if err != nil {
		return err
	}
	if opts.Exporter.enabled() {
		list := make([]map[string]any, 0, len(items))
		for _, it := range items {
			w := it.Warnings
			if w == nil {
				w = []string{}
			}
			list = append(list, opts.Exporter.pick(map[string]any{
				"number": it.Issue.Number, "title": it.Issue.Title, "url": it.Issue.HTMLURL, "state": string(it.State),
				"ready": it.Ready, "since": view.Elapsed(now.Sub(it.Issue.UpdatedAt)), "updatedAt": it.Issue.UpdatedAt,
				"usage": usageJSON(record.Record{Usage: usageOf(it)}), "warnings": w,
			}))
		}
		return opts.Exporter.write(f.Stdout, list, f.StdoutTTY, f.Width)
	}
	c := colorizer(f.Color)
	if f.StdoutTTY {
		if len(items) == 0 {
			fmt.Fprintf(f.Stdout, "No enrolled open issues in %s. Enroll one with gh ralph enroll N.\n", s.fullName())
			return nil
		}
		fmt.Fprintf(f.Stdout, "%s: %s\n", s.fullName(), plural(len(items), "enrolled open issue", "enrolled open issues"))
		var counts []string
		for _, st := range append([]workflow.State{""}, workflow.States()...) {
			k := 0
			for _, it := range items {
				if it.State == st {
					k++
				}
			}
			if k > 0 {
				counts = append(counts, fmt.Sprintf("%s %d", stateTitle(st), k))
			}
		}
		fmt.Fprintf(f.Stdout, "%s\n\n", strings.Join(counts, " · "))
	}
	width := f.Width
	if width <= 0 {
		width = 120
	}
	tp := tableprinter.New(f.Stdout, f.StdoutTTY, width)
	tp.AddHeader([]string{"STATE", "ISSUE", "TITLE", "SINCE", "NEXT", "COST"})
	for _, it := range items {
		st := it.State
		tp.AddField(stateTitle(st), tableprinter.WithColor(func(s string) string { return c.state(st, s) }))
		if f.StdoutTTY {
			tp.AddField(fmt.Sprintf("#%d", it.Issue.Number))
		} else {
			tp.AddField(fmt.Sprint(it.Issue.Number))
		}
		tp.AddField(inert.String(it.Issue.Title))
		if f.StdoutTTY {
			tp.AddField(view.Elapsed(now.Sub(it.Issue.UpdatedAt)))
		} else {
			tp.AddField(it.Issue.UpdatedAt.UTC().Format(time.RFC3339))
		}
		tp.AddField(inert.String(it.Next(cfg)))
		if f.StdoutTTY {
			tp.AddField(costText(usageOf(it)))
		} else {
			tp.AddField(usageTSV(usageOf(it)))
		}
		tp.EndRow()
	}
	if err := tp.Render(); err != nil {
		return err
	}
	var warned []string
	for _, it := range items {
		for _, w := range it.Warnings {
			warned = append(warned, fmt.Sprintf("#%d %s", it.Issue.Number, inert.String(w)))
		}
	}
	if len(warned) > 0 {
		if f.StdoutTTY {
			fmt.Fprintf(f.Stdout, "\n%s\n", c.warn("Warnings:"))
			for _, w := range warned {
				fmt.Fprintf(f.Stdout, "  %s %s\n", c.warn("!"), w)
			}
		} else {
			// Off a terminal the table is data on stdout; warnings go to stderr.
			for _, w := range warned {
				fmt.Fprintf(f.Stderr, "warning: %s\n", w)
			}
		}
	}
	return nil
}

// usageTSV is an issue's cost off a terminal: US dollars, stable for scripts (0 when none reported).
func usageTSV(u *agent.Usage) string {
	if u == nil {
		return "0"
	}
	return strconv.FormatFloat(u.CostUSD, 'f', -1, 64)
}

// usageOf is what the agent has reported for a row's issue so far.
func usageOf(r view.Row) *agent.Usage {
	if r.Record == nil {
		return nil
	}
	return r.Record.Usage
}

func stateTitle(s workflow.State) string {
	if s == "" {
		return "Not started"
	}
	return s.Title()
}

// colorizer adds ANSI colour when it is on.
type colorizer bool

func (c colorizer) wrap(code, s string) string {
	if !c {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (c colorizer) bold(s string) string { return c.wrap("1", s) }
func (c colorizer) warn(s string) string { return c.wrap("33", s) }

func (c colorizer) state(st workflow.State, s string) string {
	switch {
	case st == workflow.HumanNeeded:
		return c.wrap("31", s)
	case st == workflow.Done:
		return c.wrap("32", s)
	case st.Kind() == workflow.Gate:
		return c.wrap("33", s)
	case st.Kind() == workflow.Lock:
		return c.wrap("36", s)
	}
	return s
}

// plural is "1 phase", "2 phases": n and the word for it.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
