package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/preset"
)

// DefaultGrace is how long an agent has between SIGTERM and SIGKILL.
const DefaultGrace = 5 * time.Second

// tailSize is how much of the output Result.Tail keeps.
const tailSize = 4096

// Command is the `command` preset: it runs `sh -c Shell` in the worktree.
type Command struct {
	Shell string
	Grace time.Duration // between SIGTERM and SIGKILL on timeout or cancel; 0 means DefaultGrace
}

var _ Runner = (*Command)(nil)

// Run runs the agent in its own process group and waits for it. On timeout or
// when ctx ends, the whole group gets SIGTERM, then SIGKILL after Grace. When the
// agent exits, anything it left running in its group is killed, so that no stray
// process changes the worktree while ralph commits it. With inv.Boundary, the
// agent runs confined, under a supervisor that shares its group, and whatever
// left the group is killed too.
func (c *Command) Run(ctx context.Context, inv Invocation) (Result, error) {
	return process{argv: []string{"sh", "-c", c.Shell}, grace: c.Grace}.run(ctx, inv)
}

// process is one agent subprocess. With a parser, its output is a CLI's machine-readable event stream:
// the parser turns it into readable progress lines and usage, and the limits are enforced from that usage.
type process struct {
	argv   []string
	grace  time.Duration
	parser eventParser
	limits limits
	// inActions: ralph runs on a GitHub Actions runner (lookPath's advice for a missing CLI).
	inActions bool
}

// run runs the process in its own process group and waits for it; see [Command.Run].
func (c process) run(ctx context.Context, inv Invocation) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{Interrupted: true}, fmt.Errorf("agent not started: %w", context.Cause(ctx))
	}
	if info, err := os.Stat(inv.Dir); err != nil || !info.IsDir() {
		return Result{}, fmt.Errorf("agent working directory %q is not a directory", inv.Dir)
	}
	promptFile, err := writePrompt(inv.Dir, inv.TempDir, inv.Prompt)
	if err != nil {
		return Result{}, err
	}
	defer os.Remove(promptFile)
	// The prompt file itself is stdin: no pipe to fill, no copying goroutine for
	// Wait to wait on.
	stdin, err := os.Open(promptFile)
	if err != nil {
		return Result{}, fmt.Errorf("open prompt file: %w", err)
	}
	defer stdin.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("create output pipe: %w", err)
	}
	defer outR.Close()

	env := protocolEnv(inv, promptFile)
	if inv.Gateway != nil {
		env = inv.Gateway.env(env)
	}
	program, err := lookPath(c.argv[0], env, c.inActions)
	if err != nil {
		return Result{}, err
	}
	var cmd *exec.Cmd
	if inv.Boundary != nil {
		// The supervisor leads the process group; the agent is in it.
		cmd = inv.Boundary.Command(program, c.argv[1:])
	} else {
		cmd = exec.Command(program, c.argv[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	cmd.Dir = inv.Dir
	cmd.Env = env
	cmd.Stdin = stdin
	cmd.Stdout = outW
	cmd.Stderr = outW

	out := inv.Output
	if out == nil {
		out = io.Discard
	}
	tail := &tailBuffer{}
	copied := make(chan struct{})
	stream := newStream(c.parser, c.limits)

	start := time.Now()
	if err := cmd.Start(); err != nil {
		outW.Close()
		return Result{}, fmt.Errorf("start agent: %w", err)
	}
	outW.Close() // the agent holds the only write end now, so EOF means it is done
	go func() {
		defer close(copied)
		// Keep draining after a write error so the agent never blocks on a full pipe.
		w := io.MultiWriter(tail, &errorlessWriter{w: out})
		if stream == nil {
			_, _ = io.Copy(w, outR)
			return
		}
		stream.copy(w, outR)
	}()
	var limitHit <-chan struct{}
	if stream != nil {
		limitHit = stream.stop
	}

	pgid := cmd.Process.Pid
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var timeout <-chan time.Time
	if inv.Timeout > 0 {
		timer := time.NewTimer(inv.Timeout)
		defer timer.Stop()
		timeout = timer.C
	}
	res := Result{}
	var waitErr error
	select {
	case waitErr = <-waited:
		res.Duration = time.Since(start)
		// Strays the agent left running in its group go now: they would keep
		// changing the worktree and hold the output pipe open.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	case <-timeout:
		res.TimedOut = true
		waitErr = c.stop(pgid, waited, copied)
		res.Duration = time.Since(start)
	case <-ctx.Done():
		res.Interrupted = true
		waitErr = c.stop(pgid, waited, copied)
		res.Duration = time.Since(start)
	case <-limitHit:
		waitErr = c.stop(pgid, waited, copied)
		res.Duration = time.Since(start)
	}
	var reapErr error
	if inv.Boundary != nil {
		// What escaped the group (setsid, a killed supervisor's orphans) goes too, before the
		// worktree is read.
		_, reapErr = inv.Boundary.Reap()
	}
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		// Something that left the group still holds the pipe: stop reading.
		outR.Close()
		<-copied
	}
	res.Tail = tail.String()
	res.ExitCode = cmd.ProcessState.ExitCode()
	if stream != nil {
		u := stream.usage()
		res.Usage = &u
	}

	switch {
	case reapErr != nil:
		return res, fmt.Errorf("stop what the agent left running: %w", reapErr)
	case res.Usage != nil && (res.Usage.OverBudget || res.Usage.HitTurnLimit) && !res.TimedOut && !res.Interrupted:
		return res, &LimitError{Usage: *res.Usage, MaxTurns: c.limits.MaxTurns, MaxCost: c.limits.MaxCost}
	case res.TimedOut:
		return res, fmt.Errorf("agent timed out after %s: %w", inv.Timeout, context.DeadlineExceeded)
	case res.Interrupted:
		return res, fmt.Errorf("agent interrupted: %w", context.Cause(ctx))
	case waitErr != nil:
		var exitErr *exec.ExitError
		if !errors.As(waitErr, &exitErr) {
			return res, fmt.Errorf("wait for agent: %w", waitErr)
		}
		e := &ExitError{Code: res.ExitCode}
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
		}
		return res, e
	}
	return res, nil
}

// stop asks the whole process group to terminate and gives it the grace period
// to do so, then kills whatever is left. The group is taken to be gone when the
// agent has exited and nothing holds its output pipe any more.
func (c process) stop(pgid int, waited <-chan error, copied <-chan struct{}) error {
	grace := c.grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	var err error
	select {
	case err = <-waited:
	case <-deadline.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-waited
	}
	select {
	case <-copied:
	case <-deadline.C:
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return err
}

// writePrompt writes the prompt to a temporary file in tmp that is not inside
// dir, where the agent's changes would pick it up. In tmp, the agent's own
// TMPDIR, the file is readable by all, for an agent running as another user;
// with tmp "", it is private, in ralph's TMPDIR.
func writePrompt(dir, tmp, prompt string) (string, error) {
	f, err := os.CreateTemp(tmp, "ralph-prompt-*.md")
	if err != nil {
		return "", fmt.Errorf("create prompt file: %w", err)
	}
	name := f.Name()
	if inside(name, dir) {
		f.Close()
		os.Remove(name)
		return "", fmt.Errorf("temporary directory %s is inside the worktree %s; set TMPDIR elsewhere", filepath.Dir(name), dir)
	}
	if tmp != "" {
		if err := f.Chmod(0o644); err != nil {
			f.Close()
			os.Remove(name)
			return "", fmt.Errorf("create prompt file: %w", err)
		}
	}
	if _, err := f.WriteString(prompt); err != nil {
		f.Close()
		os.Remove(name)
		return "", fmt.Errorf("write prompt file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("write prompt file: %w", err)
	}
	return name, nil
}

func inside(path, dir string) bool {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return p
	}
	rel, err := filepath.Rel(abs(dir), abs(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// protocolEnv is inv.Env with the RALPH_* variables of the protocol set, and any
// RALPH_* the caller's environment already had removed so that there is one
// value for each.
func protocolEnv(inv Invocation, promptFile string) []string {
	set := []string{
		"RALPH_COMMAND=" + inv.Command,
		"RALPH_ISSUE=" + strconv.Itoa(inv.Issue),
		"RALPH_PROMPT_FILE=" + promptFile,
	}
	if inv.Artifact != "" {
		set = append(set, "RALPH_ARTIFACT="+inv.Artifact)
	}
	if inv.Phase > 0 {
		set = append(set, "RALPH_PHASE="+strconv.Itoa(inv.Phase))
	}
	if inv.Phases > 0 {
		set = append(set, "RALPH_PHASES="+strconv.Itoa(inv.Phases))
	}
	protocol := map[string]bool{
		"RALPH_COMMAND": true, "RALPH_ISSUE": true, "RALPH_PROMPT_FILE": true,
		"RALPH_ARTIFACT": true, "RALPH_PHASE": true, "RALPH_PHASES": true,
	}
	env := make([]string, 0, len(inv.Env)+len(set))
	for _, kv := range inv.Env {
		key, _, _ := strings.Cut(kv, "=")
		if !protocol[key] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// tailBuffer keeps the last tailSize bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailSize {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > tailSize {
		b = b[len(b)-tailSize:]
		// Do not start in the middle of a UTF-8 sequence.
		for i := 0; i < 4 && i < len(b) && b[0]&0xC0 == 0x80; i++ {
			b = b[1:]
		}
	}
	return string(b)
}

// errorlessWriter forwards to w until w fails, then drops output, so that a
// broken Output (a closed terminal) does not stop the agent.
type errorlessWriter struct {
	w      io.Writer
	failed bool
}

func (e *errorlessWriter) Write(p []byte) (int, error) {
	if !e.failed {
		if _, err := e.w.Write(p); err != nil {
			e.failed = true
		}
	}
	return len(p), nil
}

// lookPath finds program on the PATH of the agent's environment, which is where the agent's CLIs are
// installed, rather than on ralph's own. inActions (GITHUB_ACTIONS=true in ralph's environment) says where
// a missing preset's CLI belongs: in another of ralph's images, not installed by npm.
func lookPath(program string, env []string, inActions bool) (string, error) {
	if strings.Contains(program, "/") {
		return program, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, program)
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, ok := presetOfProgram(program); ok {
		pkg := p.Package
		if inActions {
			// The Action's images hold one agent's CLI each.
			return "", fmt.Errorf("%s is not in this image of ralph (each agent's CLI has an image of its own): use `uses: %s@<the same version>` in the workflow (gh ralph doctor checks it), or set agent.command to how to run it", program, ActionOf(p.Name))
		}
		return "", fmt.Errorf("%s is not installed (not found on the agent's PATH): install it with `npm install -g %s`, or set agent.command to how to run it", program, pkg)
	}
	return "", fmt.Errorf("%s not found on the agent's PATH", program)
}

// presetOfProgram is the preset whose CLI is program.
func presetOfProgram(program string) (preset.Preset, bool) {
	for _, p := range preset.List() {
		if p.Program == program {
			return p, true
		}
	}
	return preset.Preset{}, false
}
