package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// On a laptop ralph's commits follow the person's git signing: with an SSH signing key configured, gh ralph
// doctor says they will be signed, and gh ralph advance, in a repository whose ruleset requires signed
// commits on ralph's branches, pushes a research commit signed with that key (git verifies it).
func TestCLISSHSigning(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("needs ssh-keygen")
	}
	e := newCLIEnv(t, agentConfig(t))
	e.srv.AddRuleset("signed", []string{"refs/heads/ralph/**"}, githubtest.Rule{Type: "required_signatures"})
	n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
	e.srv.AddLabel(n, workflow.LabelBuild, maintainer)

	// Unsigned, ralph stops before the agent runs, naming the rule.
	r := e.cli(binary, "advance", fmt.Sprint(n))
	if r.exit == 0 || !strings.Contains(r.stderr, "required_signatures (ruleset") || !strings.Contains(r.stderr, "your git does not sign commits") {
		t.Fatalf("advance unsigned: exit %d, want a refusal naming required_signatures\n%s%s", r.exit, r.stdout, r.stderr)
	}
	if inv := e.invocations(); len(inv) != 0 {
		t.Fatalf("the agent ran: %v", inv)
	}

	keys := e.tempDir()
	key := filepath.Join(keys, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "mona@example.com", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	e.own(keys)
	e.git(e.work, "config", "commit.gpgsign", "true")
	e.git(e.work, "config", "gpg.format", "ssh")
	e.git(e.work, "config", "user.signingkey", key+".pub")

	r = e.cli(binary, "doctor")
	if !strings.Contains(r.stdout, "ralph's commits here will be signed with your ssh key "+key+".pub") ||
		!strings.Contains(r.stdout, "rule required_signatures (ruleset") {
		t.Errorf("doctor does not say the commits will be signed and the rule is met:\n%s%s", r.stdout, r.stderr)
	}

	r = e.cli(binary, "advance", fmt.Sprint(n))
	if r.exit != 0 {
		t.Fatalf("advance signed: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	e.wantState(n, workflow.ReadyForPlan)
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	signers := filepath.Join(keys, "allowed_signers")
	if err := os.WriteFile(signers, []byte("mona@example.com "+string(pub)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The research commit passed the ruleset's push check (it is signed), and the signature is the key's.
	e.git(e.srv.BareRepo, "-c", "gpg.ssh.allowedSignersFile="+signers, "verify-commit", "refs/heads/"+branch)
}
