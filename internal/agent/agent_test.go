package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/preset"
	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// baseEnv is what a scripted agent needs to find sh, cat and sleep.
func baseEnv() []string { return []string{"PATH=" + os.Getenv("PATH")} }

// parseLines turns "KEY=value" lines into a map.
func parseLines(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

func TestRunProtocol(t *testing.T) {
	t.Parallel()
	// The agent reports what it sees, copies its stdin and its prompt file aside,
	// and leaves the prompt file's path for the test to check afterwards.
	script := `
printf 'PWD=%s\n' "$(pwd -P)"
for v in RALPH_COMMAND RALPH_ISSUE RALPH_ARTIFACT RALPH_PHASE RALPH_PHASES; do
  eval "printf '%s=%s\n' $v \"\${$v-unset}\""
done
cat > "$SPY/stdin"
cp "$RALPH_PROMPT_FILE" "$SPY/promptfile"
printf '%s' "$RALPH_PROMPT_FILE" > "$SPY/promptpath"
`
	bigPrompt := strings.Repeat("Quoted issue text; $(not run) `nor this`\n", 5000) // larger than a pipe buffer
	tests := []struct {
		name string
		inv  Invocation
		want map[string]string
	}{
		{
			name: "research",
			inv:  Invocation{Command: "research", Issue: 42, Artifact: "/abs/thoughts/shared/research/doc.md", Prompt: "Research issue 42.\n"},
			want: map[string]string{"RALPH_COMMAND": "research", "RALPH_ISSUE": "42", "RALPH_ARTIFACT": "/abs/thoughts/shared/research/doc.md", "RALPH_PHASE": "unset", "RALPH_PHASES": "unset"},
		},
		{
			name: "implement",
			inv:  Invocation{Command: "implement", Issue: 7, Phase: 2, Phases: 3, Prompt: bigPrompt},
			want: map[string]string{"RALPH_COMMAND": "implement", "RALPH_ISSUE": "7", "RALPH_ARTIFACT": "unset", "RALPH_PHASE": "2", "RALPH_PHASES": "3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, spy := t.TempDir(), t.TempDir()
			inv := tt.inv
			inv.Dir = dir
			// A stale RALPH_* in the caller's environment must not win.
			inv.Env = append(baseEnv(), "SPY="+spy, "RALPH_ISSUE=999")
			var out bytes.Buffer
			inv.Output = &out
			inv.Timeout = time.Minute

			res, err := (&Command{Shell: script}).Run(context.Background(), inv)
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, out.String())
			}
			if res.ExitCode != 0 || res.TimedOut || res.Interrupted {
				t.Errorf("Result = %+v", res)
			}
			got := parseLines(out.String())
			realDir, _ := filepath.EvalSymlinks(dir)
			tt.want["PWD"] = realDir
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("agent saw (-want +got):\n%s", diff)
			}
			for _, f := range []string{"stdin", "promptfile"} {
				if b, err := os.ReadFile(filepath.Join(spy, f)); err != nil || string(b) != inv.Prompt {
					t.Errorf("prompt on %s: got %d bytes (%v), want %d", f, len(b), err, len(inv.Prompt))
				}
			}
			path, _ := os.ReadFile(filepath.Join(spy, "promptpath"))
			if inside(string(path), dir) {
				t.Errorf("prompt file %s is inside the worktree %s", path, dir)
			}
			if _, err := os.Stat(string(path)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("prompt file %s still exists after the run (%v)", path, err)
			}
		})
	}
}

func TestRunPromptNotRead(t *testing.T) {
	t.Parallel()
	// An agent that never reads its stdin must not hang ralph, however big the prompt.
	inv := Invocation{Dir: t.TempDir(), Env: baseEnv(), Prompt: strings.Repeat("x", 1<<20), Timeout: 30 * time.Second}
	res, err := (&Command{Shell: "echo done"}).Run(context.Background(), inv)
	if err != nil || res.Tail != "done\n" {
		t.Errorf("Run = %+v, %v", res, err)
	}
}

func TestRunExit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		shell      string
		wantCode   int
		wantSignal string
		wantTail   string
	}{
		{"success", "echo ok", 0, "", "ok\n"},
		{"failure", "echo to stdout; echo to stderr >&2; exit 3", 3, "", "to stdout\nto stderr\n"},
		{"killed by a signal", "echo bye; kill -KILL $$", -1, "killed", "bye\n"},
		{"missing program", "no-such-agent-program-xyz 2>/dev/null", 127, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv := Invocation{Dir: t.TempDir(), Env: baseEnv(), Timeout: time.Minute}
			res, err := (&Command{Shell: tt.shell}).Run(context.Background(), inv)
			if res.ExitCode != tt.wantCode || res.Tail != tt.wantTail {
				t.Errorf("Result = %+v, want code %d, tail %q", res, tt.wantCode, tt.wantTail)
			}
			if tt.wantCode == 0 {
				if err != nil {
					t.Errorf("Run error = %v, want nil", err)
				}
				return
			}
			var exitErr *ExitError
			if !errors.As(err, &exitErr) || exitErr.Code != tt.wantCode || !strings.Contains(exitErr.Signal, tt.wantSignal) {
				t.Errorf("Run error = %#v, want *ExitError code %d signal %q", err, tt.wantCode, tt.wantSignal)
			}
		})
	}
}

func TestRunTailIsBounded(t *testing.T) {
	t.Parallel()
	inv := Invocation{Dir: t.TempDir(), Env: baseEnv(), Timeout: time.Minute}
	var out bytes.Buffer
	inv.Output = &out
	res, err := (&Command{Shell: `i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done; echo LAST`}).Run(context.Background(), inv)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tail) > tailSize || !strings.HasSuffix(res.Tail, "line 1999\nLAST\n") {
		t.Errorf("Tail has %d bytes, ends %q", len(res.Tail), res.Tail[max(0, len(res.Tail)-30):])
	}
	if !strings.HasPrefix(out.String(), "line 0\n") || !strings.HasSuffix(out.String(), "LAST\n") {
		t.Error("Output did not get the whole output")
	}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc (macOS): kill says it exists
	}
	// "pid (comm) S ...": the state follows the last ')'.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// waitDead waits a little for pid to go away, as the kernel finishes the kill.
func waitDead(pid int) bool {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return false
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("agent never wrote %s", path)
	return 0
}

func TestRunStopsProcessGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		shell           string
		timeout         time.Duration
		cancelAfter     time.Duration // 0: do not cancel
		wantTimedOut    bool
		wantInterrupted bool
		wantErr         error
		minDuration     time.Duration
		wantTerm        bool // a grandchild saw SIGTERM before the SIGKILL
	}{
		{
			name:         "timeout kills grandchildren",
			shell:        `sleep 100 & echo $! > "$SPY/pid"; sleep 100`,
			timeout:      300 * time.Millisecond,
			wantTimedOut: true,
			wantErr:      context.DeadlineExceeded,
		},
		{
			name:            "cancel kills grandchildren",
			shell:           `sleep 100 & echo $! > "$SPY/pid"; sleep 100`,
			timeout:         time.Minute,
			cancelAfter:     300 * time.Millisecond,
			wantInterrupted: true,
			wantErr:         context.Canceled,
		},
		{
			name:         "SIGTERM ignored: SIGKILL after the grace period",
			shell:        `trap '' TERM; sleep 100 & echo $! > "$SPY/pid"; sleep 100`,
			timeout:      300 * time.Millisecond,
			wantTimedOut: true,
			wantErr:      context.DeadlineExceeded,
			minDuration:  300*time.Millisecond + 500*time.Millisecond,
		},
		{
			name:         "grandchildren get SIGTERM first",
			shell:        `sh -c 'trap "echo term > \"$SPY/term\"; exit 0" TERM; while :; do sleep 0.05; done' & echo $! > "$SPY/pid"; wait`,
			timeout:      300 * time.Millisecond,
			wantTimedOut: true,
			wantErr:      context.DeadlineExceeded,
			wantTerm:     true,
		},
		{
			name:    "strays killed after a normal exit",
			shell:   `sleep 100 & echo $! > "$SPY/pid"; exit 0`,
			timeout: time.Minute,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spy := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelAfter > 0 {
				time.AfterFunc(tt.cancelAfter, cancel)
			}
			inv := Invocation{Dir: t.TempDir(), Env: append(baseEnv(), "SPY="+spy), Timeout: tt.timeout}
			start := time.Now()
			res, err := (&Command{Shell: tt.shell, Grace: 500 * time.Millisecond}).Run(ctx, inv)
			took := time.Since(start)

			if res.TimedOut != tt.wantTimedOut || res.Interrupted != tt.wantInterrupted {
				t.Errorf("Result = %+v, want TimedOut %v, Interrupted %v", res, tt.wantTimedOut, tt.wantInterrupted)
			}
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Run error = %v, want %v", err, tt.wantErr)
			}
			if took > 10*time.Second || took < tt.minDuration {
				t.Errorf("Run took %s, want between %s and 10s", took, tt.minDuration)
			}
			if _, err := os.Stat(filepath.Join(spy, "term")); (err == nil) != tt.wantTerm {
				t.Errorf("grandchild got SIGTERM: %v, want %v", err == nil, tt.wantTerm)
			}
			if pid := readPID(t, filepath.Join(spy, "pid")); !waitDead(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("grandchild %d still running", pid)
			}
		})
	}
}

func TestRunAlreadyCancelled(t *testing.T) {
	t.Parallel()
	spy := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inv := Invocation{Dir: t.TempDir(), Env: append(baseEnv(), "SPY="+spy)}
	res, err := (&Command{Shell: `touch "$SPY/ran"`}).Run(ctx, inv)
	if !errors.Is(err, context.Canceled) || !res.Interrupted {
		t.Errorf("Run = %+v, %v; want interrupted", res, err)
	}
	if _, err := os.Stat(filepath.Join(spy, "ran")); err == nil {
		t.Error("the agent ran although the context was already cancelled")
	}
}

// timedWriter records when the first bytes arrived.
type timedWriter struct {
	mu    sync.Mutex
	first time.Time
	buf   bytes.Buffer
}

func (w *timedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first.IsZero() {
		w.first = time.Now()
	}
	return w.buf.Write(p)
}

func TestRunStreamsOutput(t *testing.T) {
	t.Parallel()
	w := &timedWriter{}
	inv := Invocation{Dir: t.TempDir(), Env: baseEnv(), Timeout: time.Minute, Output: w}
	res, err := (&Command{Shell: "echo first; sleep 1; echo second >&2"}).Run(context.Background(), inv)
	end := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if w.first.IsZero() || end.Sub(w.first) < 700*time.Millisecond {
		t.Errorf("first output arrived %s before the end, want it while the agent ran", end.Sub(w.first))
	}
	if got := w.buf.String(); got != "first\nsecond\n" || res.Tail != got {
		t.Errorf("Output = %q, Tail = %q", got, res.Tail)
	}
}

func TestRunBadDir(t *testing.T) {
	t.Parallel()
	inv := Invocation{Dir: filepath.Join(t.TempDir(), "missing"), Env: baseEnv()}
	if _, err := (&Command{Shell: "true"}).Run(context.Background(), inv); err == nil {
		t.Error("Run in a missing directory succeeded")
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg     config.Agent
		want    Runner
		wantErr bool
	}{
		{cfg: config.Agent{Preset: "command", Command: "my-agent --yes"}, want: &Command{Shell: "my-agent --yes"}},
		{cfg: config.Agent{Preset: "command"}, wantErr: true},
		{
			cfg: config.Agent{Preset: "claude", Model: "claude-sonnet-4-5", MaxTurns: 30, MaxCost: 2.5, Args: []string{"--effort", "high"}},
			want: &Preset{Name: "claude", Model: "claude-sonnet-4-5", Limits: limits{MaxTurns: 30, MaxCost: 2.5}, Argv: []string{
				"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
				"--allowedTools", "Bash", "--no-session-persistence", "--model", "claude-sonnet-4-5",
				"--max-turns", "30", "--max-budget-usd", "2.50", "--effort", "high"}},
		},
		{
			cfg: config.Agent{Preset: "claude"},
			want: &Preset{Name: "claude", Argv: []string{
				"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
				"--allowedTools", "Bash", "--no-session-persistence"}},
		},
		{
			cfg: config.Agent{Preset: "codex", Model: "gpt-5.1-codex", MaxTurns: 40, Args: []string{"-c", "model_provider=x"}},
			want: &Preset{Name: "codex", Model: "gpt-5.1-codex", Limits: limits{MaxTurns: 40}, Argv: []string{
				"codex", "exec", "--json", "--color", "never", "--sandbox", "workspace-write", "--skip-git-repo-check",
				"--ephemeral", "--model", "gpt-5.1-codex", "-c", "model_provider=x"}},
		},
		{
			cfg: config.Agent{Preset: "gemini", Model: "gemini-2.5-pro"},
			want: &Preset{Name: "gemini", Model: "gemini-2.5-pro", Argv: []string{
				"gemini", "-p", preset.GeminiPrompt, "--output-format", "stream-json", "--approval-mode", "yolo", "--skip-trust",
				"--model", "gemini-2.5-pro"}},
		},
		{
			// agent.command replaces the program: installed on first use by npx, for instance.
			cfg: config.Agent{Preset: "gemini", Command: "npx -y @google/gemini-cli@0.61.0"},
			want: &Preset{Name: "gemini", Argv: []string{
				"sh", "-c", `npx -y @google/gemini-cli@0.61.0 "$@"`, "sh",
				"-p", preset.GeminiPrompt, "--output-format", "stream-json", "--approval-mode", "yolo", "--skip-trust"}},
		},
		{cfg: config.Agent{Preset: "aider"}, wantErr: true},
		{cfg: config.Agent{}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := New(tt.cfg, nil)
		if (err != nil) != tt.wantErr {
			t.Errorf("New(%+v) error = %v, want error %v", tt.cfg, err, tt.wantErr)
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(limits{})); diff != "" {
			t.Errorf("New(%+v) (-want +got):\n%s", tt.cfg, diff)
		}
	}
}

// buildRalph builds ralph's binary, the supervisor of a confined agent, into a directory anyone can traverse.
func buildRalph(t *testing.T) string {
	t.Helper()
	dir := openDir(t, -1)
	exe := filepath.Join(dir, "gh-ralph")
	build := exec.Command("go", "build", "-o", exe, "../../cmd/gh-ralph")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build gh-ralph: %v\n%s", err, out)
	}
	return exe
}

// openDir is a new directory that uid (when not -1) owns and anyone can traverse, which t.TempDir is not.
func openDir(t *testing.T, uid int) string {
	t.Helper()
	d, err := os.MkdirTemp("", "ralph-agent-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if uid >= 0 {
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func TestRunThroughBoundary(t *testing.T) {
	t.Parallel()
	ralph := buildRalph(t)
	// As root, the agent runs as another uid: each subtest has one no process has, as Reap kills all of a
	// uid's processes.
	separate := os.Geteuid() == 0 && runtime.GOOS == "linux"
	owner := func(uid int) int {
		if separate {
			return uid
		}
		return -1
	}

	t.Run("protocol", func(t *testing.T) {
		t.Parallel()
		uid := reservedUID(t)
		dir, spy, tmp := openDir(t, owner(uid)), openDir(t, owner(uid)), openDir(t, owner(uid))
		b, err := sandbox.New(sandbox.Config{Separate: separate, UID: uid, GID: uid, Writable: []string{dir, spy, tmp}, Launcher: ralph})
		if err != nil {
			t.Fatal(err)
		}
		script := `
printf 'UID=%s\n' "$(id -u)"
for v in RALPH_COMMAND RALPH_ISSUE RALPH_ARTIFACT; do
  eval "printf '%s=%s\n' $v \"\${$v-unset}\""
done
cat > "$SPY/stdin"
cp "$RALPH_PROMPT_FILE" "$SPY/promptfile"
printf '%s' "$RALPH_PROMPT_FILE" > "$SPY/promptpath"
`
		var out bytes.Buffer
		inv := Invocation{
			Command: "research", Issue: 42, Artifact: filepath.Join(dir, "doc.md"), Prompt: "Research issue 42.\n",
			Dir: dir, TempDir: tmp, Env: append(baseEnv(), "SPY="+spy), Timeout: time.Minute, Output: &out, Boundary: b,
		}
		res, err := (&Command{Shell: script}).Run(context.Background(), inv)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("Run = %+v, %v\n%s", res, err, out.String())
		}
		want := map[string]string{"UID": strconv.Itoa(os.Geteuid()), "RALPH_COMMAND": "research", "RALPH_ISSUE": "42", "RALPH_ARTIFACT": inv.Artifact}
		if separate {
			want["UID"] = strconv.Itoa(uid)
		}
		if diff := cmp.Diff(want, parseLines(out.String())); diff != "" {
			t.Errorf("agent saw (-want +got):\n%s", diff)
		}
		for _, f := range []string{"stdin", "promptfile"} {
			if b, err := os.ReadFile(filepath.Join(spy, f)); err != nil || string(b) != inv.Prompt {
				t.Errorf("prompt on %s: got %q (%v), want %q", f, b, err, inv.Prompt)
			}
		}
		path, _ := os.ReadFile(filepath.Join(spy, "promptpath"))
		if filepath.Dir(string(path)) != tmp {
			t.Errorf("prompt file %s is not in the agent's TMPDIR %s", path, tmp)
		}
		if _, err := os.Stat(string(path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("prompt file %s still exists after the run (%v)", path, err)
		}
	})

	t.Run("what escaped is killed after the grace period", func(t *testing.T) {
		t.Parallel()
		if !separate {
			t.Skip("needs root: switching the agent to another uid (as the same user, only ralph's whole program, its subreaper, can find what escaped)")
		}
		uid := reservedUID(t)
		dir := openDir(t, uid)
		b, err := sandbox.New(sandbox.Config{Separate: true, UID: uid, GID: uid, Writable: []string{dir}, Launcher: ralph})
		if err != nil {
			t.Fatal(err)
		}
		// Deaf to SIGTERM, so that the supervisor dies with it at the SIGKILL, before it can clean up.
		script := `setsid sh -c 'while :; do echo x >> "$0/escaped"; sleep 0.05; done' "$PWD" &
trap '' TERM
while [ ! -s escaped ]; do sleep 0.01; done
sleep 300`
		inv := Invocation{Dir: dir, Env: baseEnv(), Timeout: 500 * time.Millisecond, Boundary: b}
		res, err := (&Command{Shell: script, Grace: 200 * time.Millisecond}).Run(context.Background(), inv)
		if !res.TimedOut || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run = %+v, %v; want timed out", res, err)
		}
		size := func() int64 {
			info, err := os.Stat(filepath.Join(dir, "escaped"))
			if err != nil {
				t.Fatal(err)
			}
			return info.Size()
		}
		before := size()
		time.Sleep(300 * time.Millisecond)
		if after := size(); after != before {
			t.Errorf("the escaped process still writes: %d bytes, then %d", before, after)
			_, _ = b.Reap()
		}
	})
}

func TestWriteHomeGemini(t *testing.T) {
	t.Parallel()
	gemini, _ := preset.Lookup("gemini")
	read := func(home string) string {
		b, _ := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
		return string(b)
	}
	home := t.TempDir()
	if err := writeHome(gemini, Invocation{Env: []string{"HOME=" + home, "GEMINI_API_KEY=k"}}); err != nil {
		t.Fatal(err)
	}
	if got := read(home); got != gemini.Home[0].Content {
		t.Errorf("seeded settings = %q", got)
	}
	// Settings a HOME has are the user's: left alone.
	mine := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mine, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, ".gemini", "settings.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeHome(gemini, Invocation{Env: []string{"HOME=" + mine, "GEMINI_API_KEY=k"}}); err != nil || read(mine) != "{}" {
		t.Errorf("existing settings: %v, %q", err, read(mine))
	}
	// A HOME named with a trailing slash is the same HOME.
	slash := t.TempDir()
	if err := writeHome(gemini, Invocation{Env: []string{"HOME=" + slash + "/", "GEMINI_API_KEY=k"}}); err != nil || read(slash) != gemini.Home[0].Content {
		t.Errorf("HOME with a trailing slash: %v, %q", err, read(slash))
	}
	// Without the key there is nothing to choose.
	none := t.TempDir()
	if err := writeHome(gemini, Invocation{Env: []string{"HOME=" + none}}); err != nil || read(none) != "" {
		t.Errorf("without a key: %v, %q", err, read(none))
	}
}

// Every preset's output format has a parser here, and a preset whose format has none is refused by New
// rather than run without one.
func TestEveryPresetHasAParser(t *testing.T) {
	t.Parallel()
	for _, p := range preset.List() {
		if _, ok := parsers[p.Stream]; !ok {
			t.Errorf("preset %s prints %q, which has no parser", p.Name, p.Stream)
		}
		if _, err := New(config.Agent{Preset: p.Name}, nil); err != nil {
			t.Errorf("New(%s): %v", p.Name, err)
		}
	}
	p := preset.List()[0]
	p.Stream = "some-new-format"
	if _, err := newPreset(p, config.Agent{Preset: p.Name}); err == nil || !strings.Contains(err.Error(), "no parser") {
		t.Errorf("a preset whose format has no parser: %v", err)
	}
	p = preset.List()[0]
	p.Args = nil
	if _, err := newPreset(p, config.Agent{Preset: p.Name}); err == nil || !strings.Contains(err.Error(), "Args") {
		t.Errorf("a preset without Args: %v", err)
	}
}

// reservedUID is a uid for a test's agent, held as a run of ralph holds it (sandbox.ReserveIDs) until the
// test ends, so that no other test or run draws it meanwhile.
func reservedUID(t testing.TB) int {
	t.Helper()
	uid, _, release, err := sandbox.ReserveIDs()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return uid
}
