package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// makeSubRepo is a shell function that makes, at $1, a repository with one commit whose id is always the
// same (fixed content, names and dates): the test makes it to give main a submodule, and the hostile agent
// makes it again at the submodule's path, so that its repository there is at the gitlink's commit.
const makeSubRepo = `mksub() {
  git init -q "$1" && printf 'submodule file\n' > "$1/file.txt" && git -C "$1" add file.txt &&
  GIT_AUTHOR_NAME=s GIT_AUTHOR_EMAIL=s@example.com GIT_COMMITTER_NAME=s GIT_COMMITTER_EMAIL=s@example.com \
  GIT_AUTHOR_DATE=2001-01-01T00:00:00Z GIT_COMMITTER_DATE=2001-01-01T00:00:00Z \
  git -C "$1" -c commit.gpgsign=false commit -q -m sub
}
`

// nestedFilter is the hostile agent's attack: at the submodule's path, a repository at the gitlink's
// commit whose config names a clean filter (and an fsmonitor) for every file, and a file whose time
// changed, so that git status run there, as git diff-files starts it for a submodule, must run the filter.
const nestedFilter = makeSubRepo + `
ctl="$RALPH_TEST_CONTROL"
rm -rf mod && mksub mod
git -C mod config filter.x.clean "sh -c 'id -u > $ctl/filter-ran; env >> $ctl/filter-ran; cat'"
git -C mod config filter.x.required true
git -C mod config core.fsmonitor "sh -c 'id -u > $ctl/fsmonitor-ran; env >> $ctl/fsmonitor-ran'"
echo '* filter=x' > mod/.gitattributes
touch -d 2001-01-02 mod/file.txt
`

// withSubmodule gives main a submodule at mod: a gitlink to the commit mksub makes.
func (e *env) withSubmodule() string {
	e.t.Helper()
	sub := filepath.Join(e.tempDir(), "sub")
	cmd := exec.Command("sh", "-c", makeSubRepo+`mksub "$1"`, "sh", sub)
	cmd.Env = e.gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("making the submodule: %v\n%s", err, out)
	}
	e.own(sub) // as a normal user, the test's git must own what it reads
	commit := e.git(sub, "rev-parse", "HEAD")
	seed := filepath.Join(e.tempDir(), "seed-sub")
	e.git("", "clone", "-q", e.srv.BareRepo, seed)
	if err := os.WriteFile(filepath.Join(seed, ".gitmodules"), []byte("[submodule \"mod\"]\n\tpath = mod\n\turl = ./mod.git\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.git(seed, "update-index", "--add", "--cacheinfo", "160000,"+commit+",mod")
	e.git(seed, "add", ".gitmodules")
	e.git(seed, "-c", "user.name=Mona", "-c", "user.email=mona@example.com", "commit", "-q", "-m", "add a submodule")
	e.git(seed, "push", "-q", "origin", "HEAD:main")
	return commit
}

// ranNothing fails the test if the agent's filter or fsmonitor ran, saying as whom and whether it saw a
// secret of ralph's.
func (e *env) ranNothing(secrets ...string) {
	e.t.Helper()
	for _, f := range []string{"filter-ran", "fsmonitor-ran"} {
		b, err := os.ReadFile(filepath.Join(e.control, f))
		if err != nil {
			continue
		}
		uid, _, _ := strings.Cut(string(b), "\n")
		var seen []string
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				seen = append(seen, s)
			}
		}
		e.t.Errorf("the agent's %s ran inside ralph's git, as uid %s, seeing %v", strings.TrimSuffix(f, "-ran"), uid, seen)
	}
}

// gitlinkKept checks that the branch's mod is still the gitlink to commit and holds the phase's work.
func (e *env) gitlinkKept(commit string) {
	e.t.Helper()
	subjects, files := e.branch(branch1)
	if len(matching(subjects, "Phase 1 of 1")) != 1 || !hasAll(files, "feature-1.txt") {
		e.t.Errorf("the phase was not pushed: %v %v", subjects, files)
	}
	if got := e.git(e.srv.BareRepo, "rev-parse", "refs/heads/"+branch1+":mod"); got != commit {
		e.t.Errorf("the branch's mod = %s, want the gitlink to %s", got, commit)
	}
}

// SECURITY: ralph's git reads nothing of the agent's. The agent makes, at a submodule's path, a repository
// at the gitlink's commit whose config names a clean filter and an fsmonitor, which git would run for a
// submodule's status; ralph reads the copy as data and runs neither, and its token (INPUT_TOKEN in its
// environment) reaches no program of the agent's. The step still commits the agent's work, with the
// gitlink as it was.
func TestHostileNestedRepository(t *testing.T) {
	bothUsers(t, testHostileNestedRepository)
}

func testHostileNestedRepository(t *testing.T, as runAs) {
	e := newEnvAs(t, as, baseConfig(t, "research: false\nreview: skip\n"))
	commit := e.withSubmodule()
	e.setControl("implement_extra", nestedFilter)
	_, r := e.implementOnce()
	if r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s", r.exit, r.stdout)
	}
	e.ranNothing("test-token", "INPUT_TOKEN")
	e.gitlinkKept(commit)
}

// SECURITY: the same attack through gh ralph advance: nothing of the agent's runs, and the person's token
// reaches no program of the agent's.
func TestHostileNestedRepositoryThroughCLI(t *testing.T) {
	bothUsers(t, testHostileNestedRepositoryThroughCLI)
}

func testHostileNestedRepositoryThroughCLI(t *testing.T, as runAs) {
	e := newCLIEnvAs(t, as, agentConfig(t)+"research: false\nreview: skip\n")
	commit := e.withSubmodule()
	e.git(e.work, "pull", "-q", "--ff-only", "origin", "main")
	e.setControl("phases", "1")
	e.setControl("implement_extra", nestedFilter)
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
	if r := e.cli(binary, "advance", fmt.Sprint(n), "--until", "in-progress"); r.exit != 0 {
		t.Fatalf("advance: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if r := e.cli(binary, "advance", fmt.Sprint(n)); r.exit != 0 {
		t.Fatalf("implement: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.ranNothing("test-token", "GH_ENTERPRISE_TOKEN")
	e.gitlinkKept(commit)
}
