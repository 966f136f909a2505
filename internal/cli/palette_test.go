package cli

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/record"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

const (
	green  = "\x1b[32m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	dim    = "\x1b[2m"
	reset  = "\x1b[0m"
)

// One palette, used the same way by every command: ✓ green, ✗ and X red, warnings yellow, secondary text
// dim, wherever the mark or the warning is printed (doctor, advance's result, enroll, the engine's log,
// status).
func TestPaletteSameEverywhere(t *testing.T) {
	t.Parallel()
	c := colorizer(true)
	results := []struct {
		res  engine.Result
		err  error
		want string
	}{
		{engine.Result{Issue: 1, Step: workflow.Research, From: workflow.ResearchNeeded, State: workflow.ReadyForPlan}, nil, green + "✓" + reset + " #1 research"},
		{engine.Result{Issue: 1, Step: workflow.Research, From: workflow.ResearchNeeded, State: workflow.ResearchNeeded}, errors.New("boom"), red + "✗" + reset + " #1 research"},
	}
	for _, tt := range results {
		var b bytes.Buffer
		printResult(&b, true, c, tt.res, tt.err)
		if !strings.HasPrefix(b.String(), tt.want) {
			t.Errorf("printResult wrote %q, want it to start with %q", b.String(), tt.want)
		}
	}

	var buf lockedBuffer
	now := clock
	l := newTermLog(&buf, true, func() time.Time { return now })
	l.color = c
	interrupted := false
	l.interrupted = func() bool { return interrupted }
	end := l.Group("agent: research for #1")
	l.Warnf("careful")
	interrupted = true
	end()
	for _, want := range []string{yellow + "warning:" + reset + " careful\n", dim + "agent: research for #1 — 0s" + reset, red + "✗" + reset + " agent: research for #1: interrupted"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the log %q has no %q", buf.String(), want)
		}
	}

	e := newTestEnv(t)
	e.tty, e.color = true, true
	n := e.srv.CreateIssue("mona", "Stuck", "", workflow.LabelBuild, workflow.HumanNeeded.Label())
	seedStatus(e, n, record.Record{Before: workflow.ReadyForPlan, Reason: "The plan step failed.", Branch: "ralph/1-stuck", Base: "main"})
	if code := e.run("status", fmt.Sprint(n)); code != 0 {
		t.Fatalf("status: exit %d\n%s", code, e.stderr)
	}
	for _, want := range []string{red + "Human Needed" + reset, yellow} {
		if !strings.Contains(e.stdout.String(), want) {
			t.Errorf("status %q has no %q", e.stdout.String(), want)
		}
	}
	e.run("doctor")
	for _, want := range []string{"\n" + green + "✓" + reset + " ", "\n" + red + "X" + reset + " "} {
		if !strings.Contains("\n"+e.stdout.String(), want) {
			t.Errorf("doctor %q has no line starting %q", e.stdout.String(), want)
		}
	}
	e.asUser("octocat")
	e.srv.SetPermission("octocat", "write")
	e.srv.CreateIssue("mona", "New", "")
	e.run("enroll", "2")
	if !strings.HasPrefix(e.stdout.String(), green+"✓"+reset+" #2 enrolled") {
		t.Errorf("enroll wrote %q (%s)", e.stdout.String(), e.stderr)
	}
}

// Off a terminal, and on one with NO_COLOR, no command writes an escape code, on stdout or stderr.
func TestNoColourOffATerminal(t *testing.T) {
	t.Parallel()
	sgr := regexp.MustCompile("\x1b\\[[0-9;]*m")
	for _, tty := range []bool{false, true} {
		e := newTestEnv(t)
		e.tty = tty // color stays off: off a terminal, or NO_COLOR on one
		e.asUser("octocat")
		e.srv.SetPermission("octocat", "admin")
		pipeline(e)
		for _, args := range [][]string{{"status"}, {"status", "3"}, {"status", "4"}, {"status", "6"}, {"doctor"}, {"enroll", "1"},
			{"advance", "2", "--dry-run"}, {"sweep", "--dry-run"}, {"init", "--agent", "claude"}, {"doctor"}, {"advance", "2"}} {
			e.run(args...)
			if out := e.stdout.String() + e.stderr.String(); sgr.MatchString(out) || strings.Contains(out, "\x1b") {
				t.Errorf("tty=%v: gh ralph %s wrote an escape code:\n%q", tty, strings.Join(args, " "), out)
			}
		}
	}
}
