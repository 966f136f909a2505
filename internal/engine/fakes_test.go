package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ledger"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// TestMain lets this test binary be the sandbox's supervisor: verify commands run through it, as the
// released binary's main does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.SupervisorCommand {
		os.Exit(sandbox.SupervisorMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// The repository's web page as on github.com (the Actions run's link), and the account ralph writes as.
const (
	repoURL = "https://github.com/octo/widgets"
	ralphAs = engine.ActionsBot
)

// fakeLocker holds locks in memory; an issue in held is held by another run.
type fakeLocker struct {
	mu       sync.Mutex
	held     map[int]string // issue → the other run that holds it
	tookOver string         // the next lease took the lock over from this stale holder
	err      error          // the next Acquire fails with it
	acquired []int
	released int
}

var _ engine.Locker = (*fakeLocker)(nil)

func (l *fakeLocker) Acquire(_ context.Context, n int) (engine.Lease, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		err := l.err
		l.err = nil
		return nil, err
	}
	if h, ok := l.held[n]; ok {
		return nil, &engine.HeldError{Holder: h}
	}
	l.acquired = append(l.acquired, n)
	t := l.tookOver
	l.tookOver = ""
	return &fakeLease{l: l, tookOver: t}, nil
}

type fakeLease struct {
	l        *fakeLocker
	tookOver string
}

func (f *fakeLease) Release(context.Context) error {
	f.l.mu.Lock()
	defer f.l.mu.Unlock()
	f.l.released++
	return nil
}

func (f *fakeLease) TookOver() string      { return f.tookOver }
func (f *fakeLease) Lost() <-chan struct{} { return nil }

// fakeAuth allows the logins in allowed; err, when set, is its answer to everyone.
type fakeAuth struct {
	mu      sync.Mutex
	allowed map[string]bool
	err     error
	asked   []string
}

var _ engine.Authorizer = (*fakeAuth)(nil)

func (a *fakeAuth) Authorize(_ context.Context, login string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, login)
	if a.err != nil {
		return false, a.err
	}
	return a.allowed[login], nil
}

// fakeLog keeps what the engine logged; Untrusted sections go to their own buffers.
type fakeLog struct {
	mu        sync.Mutex
	lines     []string
	untrusted map[string]*bytes.Buffer
}

var _ engine.Logger = (*fakeLog)(nil)

func (l *fakeLog) Infof(format string, args ...any) { l.add("info: " + fmt.Sprintf(format, args...)) }
func (l *fakeLog) Warnf(format string, args ...any) { l.add("warn: " + fmt.Sprintf(format, args...)) }

func (l *fakeLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

func (l *fakeLog) Untrusted(title string) (io.Writer, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.untrusted == nil {
		l.untrusted = map[string]*bytes.Buffer{}
	}
	b := &bytes.Buffer{}
	l.untrusted[title] = b
	l.lines = append(l.lines, "untrusted: "+title)
	return &lockedWriter{mu: &l.mu, w: b}, func() { l.add("end: " + title) }
}

// has says whether a logged line holds s.
func (l *fakeLog) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// fakeLedger is the day's spending in memory.
type fakeLedger struct {
	mu  sync.Mutex
	day ledger.Day
	err error
}

var _ engine.Ledger = (*fakeLedger)(nil)

func (l *fakeLedger) Today(context.Context) (ledger.Day, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.day, l.err
}

func (l *fakeLedger) Add(_ context.Context, cost float64, tokens int, _ string) (ledger.Day, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.day.CostUSD += cost
	return l.day, l.err
}

// behaviour is what the fake agent does for one command: it writes files into inv.Dir or inv.Artifact
// (through a) and returns how its run ended.
type behaviour func(a *agentRun) (agent.Result, error)

// fakeAgent is an agent.Runner that is Go code: per command, a behaviour; the default writes a good
// document (or, for implement, a file per phase).
type fakeAgent struct {
	mu    sync.Mutex
	owner [2]int // the agent's uid and gid when it is a user of its own (ralph checks that it owns its files)
	do    map[string][]behaviour
	runs  []agent.Invocation
}

var _ agent.Runner = (*fakeAgent)(nil)

// on queues behaviours for command: each run takes the next; the last one stays.
func (f *fakeAgent) on(command string, b ...behaviour) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.do == nil {
		f.do = map[string][]behaviour{}
	}
	f.do[command] = append(f.do[command], b...)
}

// set replaces the behaviours queued for command.
func (f *fakeAgent) set(command string, b ...behaviour) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.do == nil {
		f.do = map[string][]behaviour{}
	}
	f.do[command] = b
}

// commands lists the commands the agent was run for, in order.
func (f *fakeAgent) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, inv := range f.runs {
		out = append(out, inv.Command)
	}
	return out
}

// last is the last invocation.
func (f *fakeAgent) last() agent.Invocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[len(f.runs)-1]
}

func (f *fakeAgent) Run(ctx context.Context, inv agent.Invocation) (agent.Result, error) {
	f.mu.Lock()
	f.runs = append(f.runs, inv)
	var b behaviour
	if q := f.do[inv.Command]; len(q) > 0 {
		b = q[0]
		if len(q) > 1 {
			f.do[inv.Command] = q[1:]
		}
	}
	f.mu.Unlock()
	if b == nil {
		b = defaultBehaviour(inv.Command)
	}
	a := &agentRun{inv: inv, ctx: ctx}
	res, err := b(a)
	if a.err != nil {
		return agent.Result{ExitCode: 1}, a.err
	}
	// The agent's files are its own: as root, ralph refuses files in the agent's copy it does not own.
	if f.owner[0] != 0 {
		for _, dir := range []string{inv.Dir, inv.TempDir} {
			if err := chownTree(dir, f.owner[0], f.owner[1]); err != nil {
				return agent.Result{ExitCode: 1}, err
			}
		}
	}
	return res, err
}

func chownTree(dir string, uid, gid int) error {
	if dir == "" {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// agentRun is one run of the fake agent.
type agentRun struct {
	inv agent.Invocation
	ctx context.Context
	err error
}

// artifact writes the document at RALPH_ARTIFACT.
func (a *agentRun) artifact(content string) { a.write(a.inv.Artifact, content) }

// file writes a file at rel in the agent's copy.
func (a *agentRun) file(rel, content string) { a.write(filepath.Join(a.inv.Dir, rel), content) }

func (a *agentRun) write(path, content string) {
	if a.err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		a.err = err
		return
	}
	a.err = os.WriteFile(path, []byte(content), 0o644)
}

// ok is a run that exited 0.
func ok() (agent.Result, error) { return agent.Result{ExitCode: 0}, nil }

// writes a document at RALPH_ARTIFACT and exits 0.
func writes(doc string) behaviour {
	return func(a *agentRun) (agent.Result, error) { a.artifact(doc); return ok() }
}

// exits fails the run with an exit code and some output.
func exits(code int, tail string) behaviour {
	return func(*agentRun) (agent.Result, error) {
		return agent.Result{ExitCode: code, Tail: tail}, &agent.ExitError{Code: code}
	}
}

// does nothing and exits 0.
func nothing(*agentRun) (agent.Result, error) { return ok() }

// Documents the default agent writes.
const (
	researchDoc = "# Research\n\nThe widget lives in widget.go.\n"
	planDoc     = "# Plan\n\n## Phase 1: Add the parser\n\nWrite parse.go.\n\n## Phase 2: Wire it up\n\nWrite wire.go.\n"
	approved    = "# Review\n\nLooks right.\n\nVERDICT: APPROVED\n"
	sentBack    = "# Review\n\nPhase 2 is vague.\n\nVERDICT: NEEDS_ITERATION\n"
)

func defaultBehaviour(command string) behaviour {
	switch command {
	case "research":
		return writes(researchDoc)
	case "plan":
		return writes(planDoc)
	case "review", "self-review":
		return writes(approved)
	case "triage":
		return writes("The issue is clear enough to research.\n\nDECISION: research\n")
	case "implement":
		return func(a *agentRun) (agent.Result, error) {
			a.file(fmt.Sprintf("phase%d.txt", a.inv.Phase), fmt.Sprintf("phase %d of %d\n", a.inv.Phase, a.inv.Phases))
			return ok()
		}
	}
	return func(*agentRun) (agent.Result, error) {
		return agent.Result{ExitCode: 2}, errors.New("no behaviour for " + command)
	}
}
