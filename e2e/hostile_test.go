package e2e

import (
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The agent is hostile: these tests give the scripted agent the script of a prompt-injected one (run as
// extra_<command> after it did its job) and check, through the built binary run as the Action runs it,
// that the attack gets nothing. Each names the promise of SECURITY.md it proves. Those that do not need
// root by nature run both as root and as a normal user (bothUsers).

const branch1 = "ralph/1-add-a-greeting"

// basicAuth is the push credential as git would send it.
var basicAuth = base64.StdEncoding.EncodeToString([]byte("x-access-token:test-token"))

// needRoot skips a test of the separate principal, which only a ralph running as root (the Action's
// container, CI) sets up.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: ralph switches the agent to a user of its own only when it runs as root, as in the Action's container")
	}
}

// leak reads what the hostile agent managed to write to the control directory's leak file.
func (e *env) leak() string {
	b, _ := os.ReadFile(filepath.Join(e.control, "leak"))
	return string(b)
}

func secretIn(s string) bool {
	return strings.Contains(s, "test-token") || strings.Contains(s, basicAuth)
}

// implementOnce enrolls an issue with research off and review skipped, and runs review then one implement.
func (e *env) implementOnce() (int, result) {
	e.t.Helper()
	e.setControl("phases", "1")
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	if r := e.label(n, maintainer); r.exit != 0 {
		e.t.Fatalf("plan: exit %d\n%s", r.exit, r.stdout)
	}
	e.next() // review: skip
	r, ok := e.next()
	if !ok || r.outputs["step"] != "implement" {
		e.t.Fatalf("no implement run: %v", r.outputs)
	}
	return n, r
}

// SECURITY: the agent cannot read ralph's environment (/proc/<pid>/environ) or any other process's.
func TestHostileReadsProcEnviron(t *testing.T) {
	bothUsers(t, func(t *testing.T, as runAs) { testHostileReadsProcEnviron(t, as) })
}

func testHostileReadsProcEnviron(t *testing.T, as runAs) {
	e := newEnvAs(t, as, baseConfig(t, ""))
	e.setControl("extra_research", `
for f in /proc/[0-9]*/environ /proc/[0-9]*/task/*/environ; do
  tr '\0' '\n' < "$f" 2>/dev/null
done | grep -a -e test-token -e INPUT_TOKEN >> "$RALPH_ARTIFACT"
echo "tried /proc" >> "$RALPH_TEST_CONTROL/tried"
# ptrace ralph and its supervisor: up the chain of parents, the processes running ralph's binary.
/usr/bin/python3 - "$RALPH_TEST_CONTROL" <<'PY' || true
import ctypes, os, sys
ctl = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
pid = os.getppid()
while pid > 1:
    stat = open("/proc/%d/stat" % pid).read()
    parent = int(stat.rsplit(")", 1)[1].split()[1])
    if "(gh-ralph)" in stat:
        with open(ctl + "/ptrace-tried", "a") as f:
            f.write("%d\n" % pid)
        if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH
            open(ctl + "/leak", "a").write("attached to %d\n" % pid)
            libc.ptrace(17, pid, 0, 0)  # PTRACE_DETACH
    pid = parent
PY
`)
	n := e.srv.CreateIssue("octocat", "Add a greeting", "")
	r := e.label(n, maintainer)
	if r.exit != 0 {
		t.Fatalf("exit %d\n%s", r.exit, r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(e.control, "tried")); len(b) == 0 {
		t.Fatal("the hostile script did not run")
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		if b, _ := os.ReadFile(filepath.Join(e.control, "ptrace-tried")); strings.Count(string(b), "\n") != 2 {
			t.Errorf("the ptrace attempt did not run: %q", b)
		}
	}
	if l := e.leak(); l != "" {
		t.Errorf("the agent traced ralph or its supervisor:\n%s", l)
	}
	_, files := e.branch(branch1)
	doc := e.git(e.srv.BareRepo, "show", "refs/heads/"+branch1+":"+matching(files, "^thoughts/shared/research/")[0])
	if secretIn(doc) {
		t.Errorf("the research document holds the token:\n%s", doc)
	}
	for _, c := range e.srv.Comments(n) {
		if secretIn(c.Body) {
			t.Errorf("a comment holds the token:\n%s", c.Body)
		}
	}
}

// SECURITY: nothing the agent started outlives its step (setsid, double fork), so nothing reads git's
// command line or environment during the push, or changes the files after ralph checked them.
func TestHostileLeavesProcesses(t *testing.T) {
	bothUsers(t, func(t *testing.T, as runAs) { testHostileLeavesProcesses(t, as) })
}

func testHostileLeavesProcesses(t *testing.T, as runAs) {
	e := newEnvAs(t, as, baseConfig(t, "research: false\nreview: skip\n"))
	e.setControl("implement_extra", `
ctl="$RALPH_TEST_CONTROL"
( setsid sh -c '
  echo $$ > "$RALPH_TEST_CONTROL/bg.pid"
  sleep 1
  while :; do
    cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\0" "\n" | grep -a -i -e "extrahead[e]r" -e "authorizatio[n]:" >> "$RALPH_TEST_CONTROL/leak"
    for f in /proc/[0-9]*/environ; do tr "\0" "\n" < "$f" 2>/dev/null | grep -a -e "GIT_CONFIG_VALU[E]" -e "test-toke[n]" >> "$RALPH_TEST_CONTROL/leak"; done
    echo late > late.txt 2>/dev/null
    sleep 0.05
  done' > /dev/null 2>&1 < /dev/null & ) &
sleep 0.3
`)
	n, r := e.implementOnce()
	if r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s", r.exit, r.stdout)
	}
	b, err := os.ReadFile(filepath.Join(e.control, "bg.pid"))
	if err != nil {
		t.Fatal("the background process never started")
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if running(pid) {
		t.Errorf("the agent's background process %d is still running after the step", pid)
	}
	if l := e.leak(); secretIn(l) || strings.Contains(strings.ToLower(l), "authorization") {
		t.Errorf("the background process read the push credential:\n%q", l)
	}
	_, files := e.branch(branch1)
	if hasAll(files, "late.txt") {
		t.Errorf("a file written after the agent's exit was pushed: %v", files)
	}
	if !hasAll(files, "feature-1.txt") {
		t.Errorf("the phase's work was not pushed: %v", files)
	}
	e.wantState(n, workflow.InProgress)
}

// running says whether pid runs (a zombie does not count).
func running(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// SECURITY: ralph's git reads no config, attribute, hook or .git file of the agent's; the agent cannot
// write ralph's HOME.
func TestHostileGitConfig(t *testing.T) {
	bothUsers(t, func(t *testing.T, as runAs) { testHostileGitConfig(t, as) })
}

func testHostileGitConfig(t *testing.T, as runAs) {
	e := newEnvAs(t, as, baseConfig(t, "research: false\nreview: skip\n"))
	evil := filepath.Join(e.tempDir(), "evil.git")
	e.git("", "init", "-q", "--bare", evil)
	script := `
ctl="$RALPH_TEST_CONTROL"
evilcfg='[filter "x"]
	clean = sh -c "env > '"$ctl"'/filter-env; cat"
[trace2]
	eventTarget = '"$ctl"'/trace2
[url "EVIL"]
	pushInsteadOf = ORIGIN
[core]
	hooksPath = HOOKS
	fsmonitor = sh -c "echo ran > '"$ctl"'/fsmonitor"'
evilcfg=$(printf '%s' "$evilcfg" | sed -e "s|EVIL|EVILREPO|" -e "s|ORIGIN|ORIGINREPO|" -e "s|HOOKS|$ctl/hooks|")
mkdir -p "$ctl/hooks"; printf '#!/bin/sh\nenv > %s/hook-env\n' "$ctl" > "$ctl/hooks/pre-push"; chmod +x "$ctl/hooks/pre-push"
# The agent's own HOME, and ralph's (the test's) HOME, which it must not be able to write.
printf '%s\n' "$evilcfg" >> "$HOME/.gitconfig"
printf '%s\n' "$evilcfg" >> RALPHHOME/.gitconfig 2>/dev/null && echo "wrote ralph's gitconfig" >> "$ctl/leak"
echo '* filter=x' > .gitattributes
# Its own repository: config, and then .git replaced by a gitdir file pointing elsewhere.
printf '%s\n' "$evilcfg" >> .git/config
rm -rf .git && echo "gitdir: EVILREPO" > .git
`
	script = strings.NewReplacer("EVILREPO", evil, "ORIGINREPO", e.srv.BareRepo, "RALPHHOME", e.home).Replace(script)
	e.setControl("implement_extra", script)
	_, r := e.implementOnce()
	if r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s", r.exit, r.stdout)
	}
	for _, f := range []string{"filter-env", "trace2", "fsmonitor", "hook-env"} {
		if b, err := os.ReadFile(filepath.Join(e.control, f)); err == nil {
			t.Errorf("ralph's git honoured the agent's config: %s exists:\n%.300s", f, b)
		}
	}
	// As a normal user without Landlock the agent is ralph's user and may write its HOME: ralph's git reads
	// no global config, which the checks above prove.
	if l := e.leak(); l != "" && (!e.sameUser() || landlock(r.stderr)) {
		t.Errorf("the agent wrote ralph's HOME: %s", l)
	}
	if refs := e.git(evil, "for-each-ref"); refs != "" {
		t.Errorf("the push went to the agent's repository: %s", refs)
	}
	if subjects, files := e.branch(branch1); len(matching(subjects, "Phase 1 of 1")) != 1 || !hasAll(files, "feature-1.txt") {
		t.Errorf("the phase was not pushed to the real remote: %v %v", subjects, files)
	}
}

// SECURITY: the runner's file commands and ralph's log are ralph's alone: the agent cannot write
// GITHUB_ENV or GITHUB_PATH, and no workflow command it prints takes effect (the log fences it with
// ::stop-commands:: and a fresh token).
func TestHostileRunnerChannels(t *testing.T) {
	bothUsers(t, func(t *testing.T, as runAs) { testHostileRunnerChannels(t, as) })
}

func testHostileRunnerChannels(t *testing.T, as runAs) {
	e := newEnvAs(t, as, baseConfig(t, "research: false\nreview: skip\n"))
	e.setControl("implement_extra", `
ctl="$RALPH_TEST_CONTROL"
run=$(cat "$ctl/rundir")
echo "EVIL=1" >> "$run/file_commands/set_env" 2>/dev/null && echo "wrote GITHUB_ENV" >> "$ctl/leak"
echo "/evil/bin" >> "$run/file_commands/add_path" 2>/dev/null && echo "wrote GITHUB_PATH" >> "$ctl/leak"
env | grep -e '^GITHUB_' -e '^INPUT_' -e '^ACTIONS_' -e '^RUNNER_' >> "$ctl/leak"
echo "::set-output name=state::pwned"
echo "::stop-commands::mine"
echo "::mine::"
echo "::add-mask::feature"
printf '::error::pwned'
`)
	_, r := e.implementOnce()
	if r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s", r.exit, r.stdout)
	}
	// As a normal user without Landlock, the file commands are the agent's user's to write (they are
	// ralph's user's): only the environment it was given, and the log's fence, keep it out.
	files := !e.sameUser() || landlock(r.stderr)
	l := e.leak()
	if !files {
		l = regexp.MustCompile(`(?m)^wrote GITHUB_(ENV|PATH)\n`).ReplaceAllString(l, "")
	}
	if l != "" {
		t.Errorf("the agent reached the runner's channels:\n%s", l)
	}
	run, _ := os.ReadFile(filepath.Join(e.control, "rundir"))
	for _, f := range []string{"set_env", "add_path"} {
		if b, _ := os.ReadFile(filepath.Join(string(run), "file_commands", f)); len(b) != 0 && files {
			t.Errorf("%s holds %q", f, b)
		}
	}
	if r.outputs["state"] != "in-progress" {
		t.Errorf("output state = %q", r.outputs["state"])
	}
	// Every line the agent printed sits between ralph's ::stop-commands::<token> and ::<token>::.
	fence := regexp.MustCompile(`(?s)::stop-commands::([0-9a-f]{32})\n(.*?)\n::([0-9a-f]{32})::\n`)
	var inside string
	for _, m := range fence.FindAllStringSubmatch(r.stdout, -1) {
		if m[1] != m[3] {
			t.Errorf("fence opened with %s and closed with %s", m[1], m[3])
		}
		inside += m[2]
	}
	for _, line := range []string{"::set-output name=state::pwned", "::stop-commands::mine", "::mine::", "::add-mask::feature", "::error::pwned"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("the agent's %q is not in the log at all", line)
		}
		if !strings.Contains(inside, line) {
			t.Errorf("the agent's %q is outside ralph's fence:\n%s", line, r.stdout)
		}
	}
	tokens := regexp.MustCompile(`::stop-commands::([0-9a-f]{32})`).FindAllStringSubmatch(r.stdout, -1)
	seen := map[string]bool{}
	for _, m := range tokens {
		if seen[m[1]] {
			t.Errorf("the fence token %s was used twice", m[1])
		}
		seen[m[1]] = true
	}
}

// SECURITY: the agent cannot connect to the Docker socket the runner mounts into the container, nor read
// the credential actions/checkout persisted (v4: the checkout's .git/config; v6: a file in the runner's
// temp directory).
func TestHostileRunnerMounts(t *testing.T) {
	t.Parallel()
	needRoot(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3 for the agent's socket client")
	}
	e := newEnv(t, baseConfig(t, "research: false\nreview: skip\n"))
	// A socket as reachable as the runner's Docker socket would be to a user in its group: here, to all.
	sockDir, err := os.MkdirTemp("", "ralph-docker-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	if err := os.Chmod(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	connected := make(chan struct{}, 1)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			connected <- struct{}{}
			c.Close()
		}
	}()
	e.extra = map[string]string{"RALPH_AGENT_DENY": sock}
	e.setControl("implement_extra", `
ctl="$RALPH_TEST_CONTROL"
run=$(cat "$ctl/rundir")
/usr/bin/python3 -c 'import socket,sys; open(sys.argv[2], "a").write("socket\n"); s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.send(b"GET /containers/json")' "`+sock+`" "$ctl/attempts" 2>/dev/null && echo "connected to the docker socket" >> "$ctl/leak"
cat "$run/work/.git/config" "$run"/runner_temp/*.config >> "$ctl/leak" 2>/dev/null
echo tried >> "$ctl/tried"
`)
	_, r := e.implementOnce()
	if r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s", r.exit, r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(e.control, "tried")); len(b) == 0 {
		t.Fatal("the hostile script did not run")
	}
	if b, _ := os.ReadFile(filepath.Join(e.control, "attempts")); !strings.Contains(string(b), "socket") {
		t.Fatalf("the agent's socket client did not run: %q", b)
	}
	select {
	case <-connected:
		t.Errorf("the agent connected to the socket")
	default:
	}
	if l := e.leak(); l != "" {
		t.Errorf("the agent reached the runner's mounts:\n%s", l)
	}
}

// SECURITY: a document is read as a regular file only, without blocking and with a size cap: a FIFO or
// a symlink to /dev/zero fails the step at once, in bounded memory, and the lock is released.
func TestHostileDocuments(t *testing.T) {
	bothUsers(t, testHostileDocuments)
}

func testHostileDocuments(t *testing.T, as runAs) {
	for name, script := range map[string]string{
		"fifo":             `rm -f "$RALPH_ARTIFACT"; mkfifo "$RALPH_ARTIFACT"`,
		"dev-zero":         `rm -f "$RALPH_ARTIFACT"; ln -s /dev/zero "$RALPH_ARTIFACT"`,
		"symlinked-parent": `d=$(dirname "$RALPH_ARTIFACT"); mkdir -p "$TMPDIR/elsewhere"; cp "$RALPH_ARTIFACT" "$TMPDIR/elsewhere/"; rm -rf "$d"; ln -s "$TMPDIR/elsewhere" "$d"`,
		"huge":             `head -c 3000000 /dev/zero | tr '\0' a > "$RALPH_ARTIFACT"`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnvAs(t, as, baseConfig(t, ""))
			e.peak = true
			e.setControl("extra_research", script)
			n := e.srv.CreateIssue("octocat", "Add a greeting", "")
			start := time.Now()
			r := e.label(n, maintainer)
			if d := time.Since(start); d > 60*time.Second {
				t.Errorf("the run took %s", d)
			}
			if r.exit != 1 {
				t.Fatalf("exit %d, want the step to fail\n%s", r.exit, r.stdout)
			}
			if r.maxRSS > 300*1024 {
				t.Errorf("ralph's peak memory was %d MiB", r.maxRSS/1024)
			}
			want := map[string]string{"fifo": "is not a regular file (a FIFO)", "dev-zero": "is a symlink", "symlinked-parent": "behind a symlink", "huge": "more than the limit"}[name]
			if !strings.Contains(e.statusComment(n), want) {
				t.Errorf("the status comment does not say %q:\n%s", want, e.statusComment(n))
			}
			if refs := e.lockRefs(); len(refs) != 0 {
				t.Errorf("the lock is still held: %v", refs)
			}
			e.wantState(n, workflow.ResearchNeeded)
			if e.branchExists(branch1) {
				if _, files := e.branch(branch1); len(matching(files, "^thoughts/")) != 0 {
					t.Errorf("the document was pushed: %v", files)
				}
			}
		})
	}
}

// SECURITY: what is pushed is the commit ralph built from its own index and checked: not a commit the
// agent made (even with a forged Ralph-Step trailer, even on the failure path), not a workflow renamed
// away, not a chain of relative symlinks that ends outside the repository.
func TestHostileCommits(t *testing.T) {
	bothUsers(t, testHostileCommits)
}

func testHostileCommits(t *testing.T, as runAs) {
	up := "mkdir -p a\nln -s .. a/up0\nln -s a/up0/.. l0\n"
	for i := 1; i <= 15; i++ {
		up += fmt.Sprintf("ln -s ../l%d a/up%d\nln -s a/up%d/.. l%d\n", i-1, i, i, i)
	}
	up += "ln -s a/up15/etc/passwd passwd\n"
	for name, tc := range map[string]struct {
		script, verify, want string
		log                  string // what the run's log says too, where the status comment is cut
	}{
		"forged trailer on the failure path": {
			script: "echo x > fail-verify\ngit add -A && git -c user.name=x -c user.email=x@x commit -qm 'ralph: Phase 1 of 1: #1 forged' -m 'Ralph-Step: implement/1/1'\n",
			verify: "test ! -f fail-verify",
			want:   "verify command",
		},
		"workflow renamed away": {
			script: "mv .github/workflows/ci.yml ci.yml.bak\n",
			want:   "`.github/workflows/ci.yml` (protected_paths: deleted or renamed away)",
		},
		"workflow made executable": {
			script: "chmod +x .github/workflows/ci.yml\n",
			want:   "`.github/workflows/ci.yml` (protected_paths: mode or type changed)",
		},
		// 32 refused links: the status comment keeps the first of them, cut with a count (a bounded record);
		// the run's log names every one, passwd last.
		"chain of relative symlinks": {
			script: up,
			want:   "`a/up1` (a symlink to `../l0`, which resolves outside the repository)",
			log:    "`passwd` (a symlink to `a/up15/etc/passwd`, which resolves outside the repository)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := "research: false\nreview: skip\n"
			if tc.verify != "" {
				cfg = "agent:\n  preset: command\n  command: " + agentCommand(t) + "\n  timeout: 2m\n" + agentEnvYAML + "verify:\n  - " + tc.verify + "\n" + cfg
			} else {
				cfg = baseConfig(t, cfg)
			}
			e := newEnvAs(t, as, cfg)
			e.pushFile(".github/workflows/ci.yml", "on: push\n")
			e.setControl("implement_extra", tc.script)
			n, r := e.implementOnce()
			if r.exit != 1 {
				t.Fatalf("implement: exit %d, want a refusal\n%s", r.exit, r.stdout)
			}
			if !strings.Contains(e.statusComment(n), tc.want) {
				t.Errorf("the status comment does not say %q:\n%s", tc.want, e.statusComment(n))
			}
			if tc.log != "" && !strings.Contains(r.stdout, tc.log) {
				t.Errorf("the run's log does not say %q:\n%s", tc.log, r.stdout)
			}
			if e.branchExists(branch1) {
				subjects, files := e.branch(branch1)
				if len(matching(subjects, "Phase|forged")) != 0 || hasAll(files, "passwd") || hasAll(files, "ci.yml.bak") || hasAll(files, "feature-1.txt") {
					t.Errorf("a refused change was pushed: %v %v", subjects, files)
				}
			}
		})
	}
}

// pushFile commits a file to main on the origin, as a maintainer would.
func (e *env) pushFile(path, content string) {
	e.t.Helper()
	dir := filepath.Join(e.tempDir(), "seed")
	e.git("", "clone", "-q", e.srv.BareRepo, dir)
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.own(dir)
	e.git(dir, "add", "-A")
	e.git(dir, "-c", "user.name=Mona", "-c", "user.email=mona@example.com", "commit", "-q", "-m", "add "+path)
	e.git(dir, "push", "-q", "origin", "HEAD:main")
}

// The same agent through gh ralph advance on a person's machine: it cannot read ralph's environment
// (ralph is not dumpable), its processes do not outlive the step, its own commits are not pushed, and it
// cannot write outside its copy, HOME and TMPDIR where the kernel has Landlock.
func TestHostileThroughCLI(t *testing.T) {
	bothUsers(t, func(t *testing.T, as runAs) { testHostileThroughCLI(t, as) })
}

func testHostileThroughCLI(t *testing.T, as runAs) {
	e := newCLIEnvAs(t, as, agentConfig(t)+"research: false\nreview: skip\n")
	outside := filepath.Join(e.home, "outside")
	e.setControl("phases", "1")
	e.setControl("implement_extra", `
ctl="$RALPH_TEST_CONTROL"
for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f" 2>/dev/null; done | grep -a -e test-token -e GH_ENTERPRISE_TOKEN >> "$ctl/leak"
( setsid sh -c 'echo $$ > "$RALPH_TEST_CONTROL/bg.pid"; while :; do sleep 0.05; done' > /dev/null 2>&1 < /dev/null & ) &
echo x > `+outside+` 2>/dev/null && echo "wrote outside" >> "$ctl/leak"
git add -A && git -c user.name=x -c user.email=x@x commit -qm forged -m 'Ralph-Step: implement/1/1'
sleep 0.2
`)
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	r := e.cli(binary, "advance", fmt.Sprint(n), "--until", "in-progress")
	if r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	r = e.cli(binary, "advance", fmt.Sprint(n))
	if r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	leak := e.leak()
	if secretIn(leak) || strings.Contains(leak, "GH_ENTERPRISE_TOKEN") {
		t.Errorf("the agent read the token from /proc:\n%s", leak)
	}
	if strings.Contains(leak, "wrote outside") && landlock(r.stderr) {
		t.Errorf("the agent wrote outside its copy, HOME and TMPDIR with Landlock in force")
	}
	b, _ := os.ReadFile(filepath.Join(e.control, "bg.pid"))
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid == 0 || running(pid) {
		t.Errorf("the agent's background process (pid %d) outlived the step", pid)
	}
	subjects, _ := e.branch(branch1)
	if len(matching(subjects, "^forged")) != 0 || len(matching(subjects, "Phase 1 of 1")) != 1 {
		t.Errorf("branch commits %v, want ralph's phase commit and not the agent's", subjects)
	}
}

// landlock says whether the run's log says Landlock was in force.
func landlock(log string) bool { return strings.Contains(log, "landlock ABI") }

// SECURITY: a secret the agent holds (what agent.env passes through: its model key) never reaches GitHub
// through ralph: a document or a change that holds its value is refused, and the failure comment shows the
// agent's output with the value replaced by ***.
func TestHostileLeaksItsKey(t *testing.T) {
	bothUsers(t, testHostileLeaksItsKey)
}

func testHostileLeaksItsKey(t *testing.T, as runAs) {
	const key = "sk-model-key-0123456789"
	cfgFor := func(t *testing.T) string {
		return "agent:\n  preset: command\n  command: " + agentCommand(t) + "\n  timeout: 2m\n" + agentEnvYAML + "    MODEL_KEY: \"\"\nverify:\n  - test -f README.md\n"
	}
	nothingPublic := func(t *testing.T, e *env, n int) {
		t.Helper()
		for _, c := range e.srv.Comments(n) {
			if strings.Contains(c.Body, key) {
				t.Errorf("a comment holds the key:\n%s", c.Body)
			}
		}
		if e.branchExists(branch1) {
			if out, _ := e.gitCommand(e.srv.BareRepo, "grep", "-l", "-F", key, "refs/heads/"+branch1).Output(); len(out) != 0 {
				t.Errorf("the branch holds the key: %s", out)
			}
		}
	}
	t.Run("document", func(t *testing.T) {
		t.Parallel()
		e := newEnvAs(t, as, cfgFor(t))
		e.extra = map[string]string{"MODEL_KEY": key}
		e.setControl("extra_research", `echo "my key: $MODEL_KEY" >> "$RALPH_ARTIFACT"; echo "printing $MODEL_KEY"`)
		n := e.srv.CreateIssue("octocat", "Add a greeting", "")
		r := e.label(n, maintainer)
		if r.exit != 1 || !strings.Contains(e.statusComment(n), "holds the value of MODEL_KEY") {
			t.Fatalf("research: exit %d, want a refusal naming MODEL_KEY\n%s", r.exit, r.stdout)
		}
		nothingPublic(t, e, n)
	})
	t.Run("change", func(t *testing.T) {
		t.Parallel()
		e := newEnvAs(t, as, cfgFor(t)+"research: false\nreview: skip\n")
		e.extra = map[string]string{"MODEL_KEY": key}
		e.setControl("implement_extra", `echo "$MODEL_KEY" > config.txt`)
		n, r := e.implementOnce()
		if r.exit != 1 || !strings.Contains(e.statusComment(n), "`config.txt` (holds the value of MODEL_KEY)") {
			t.Fatalf("implement: exit %d, want a refusal naming config.txt\n%s", r.exit, r.stdout)
		}
		nothingPublic(t, e, n)
	})
	t.Run("output", func(t *testing.T) {
		t.Parallel()
		e := newEnvAs(t, as, cfgFor(t))
		e.extra = map[string]string{"MODEL_KEY": key}
		e.setControl("extra_research", `echo "the key is $MODEL_KEY"; exit 3`)
		n := e.srv.CreateIssue("octocat", "Add a greeting", "")
		if r := e.label(n, maintainer); r.exit != 1 {
			t.Fatalf("research: exit %d, want a failure\n%s", r.exit, r.stdout)
		}
		found := false
		for _, c := range e.srv.Comments(n) {
			found = found || strings.Contains(c.Body, "the key is ***")
		}
		if !found {
			t.Errorf("no failure comment with the agent's output, redacted")
		}
		nothingPublic(t, e, n)
	})
}
