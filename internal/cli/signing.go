package cli

import (
	"context"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/doctor"
	"github.com/ralph-dev/gh-ralph/internal/engine"
)

// gitSigning is the person's git signing configuration in their checkout: ralph's commits here are signed
// as their own would be (commit.gpgsign, gpg.format, user.signingkey, the signing program, their ssh or gpg
// agent).
type gitSigning struct {
	on      bool
	format  string // openpgp, ssh or x509
	key     string
	program string // gpg.program, gpg.ssh.program or gpg.x509.program, when set
}

// readSigning reads the signing configuration of the person's git in root.
func readSigning(ctx context.Context, root string) gitSigning {
	if root == "" {
		return gitSigning{}
	}
	on, _ := gitOut(ctx, root, "config", "--type=bool", "commit.gpgsign")
	g := gitSigning{on: on == "true", format: "openpgp"}
	if f, _ := gitOut(ctx, root, "config", "gpg.format"); f != "" {
		g.format = f
	}
	g.key, _ = gitOut(ctx, root, "config", "user.signingkey")
	prog := "gpg.program"
	if g.format != "openpgp" {
		prog = "gpg." + g.format + ".program"
	}
	g.program, _ = gitOut(ctx, root, "config", prog)
	return g
}

// config is the git config ralph's commit-tree signs with (git.Signature.Sign); nil when the person does not
// sign.
func (g gitSigning) config() []string {
	if !g.engine().Signed {
		return nil
	}
	c := []string{"gpg.format=" + g.format}
	if g.key != "" {
		c = append(c, "user.signingKey="+g.key)
	}
	if g.program != "" {
		prog := "gpg.program"
		if g.format != "openpgp" {
			prog = "gpg." + g.format + ".program"
		}
		c = append(c, prog+"="+g.program)
	}
	return c
}

// describe says how ralph's commits here are signed, or why not.
func (g gitSigning) describe() string {
	switch {
	case !g.on:
		return "your git does not sign commits: commit.gpgsign is not true"
	case g.key == "" && g.format == "ssh":
		return "commit.gpgsign is true with gpg.format ssh but no user.signingkey"
	case g.key == "":
		return "signed with your " + g.format + " default key"
	}
	return "signed with your " + g.format + " key " + strings.TrimSpace(g.key)
}

func (g gitSigning) engine() engine.Signing {
	return engine.Signing{Signed: g.on && (g.key != "" || g.format != "ssh"), How: g.describe()}
}

// finding is what doctor says of it.
func (g gitSigning) finding() doctor.Finding {
	if g.engine().Signed {
		return doctor.Finding{Msg: "ralph's commits here will be " + g.describe() + " (GitHub shows them Verified when it knows the key)"}
	}
	if g.on {
		return doctor.Finding{Problem: true, Msg: "ralph cannot sign its commits here: " + g.describe(), Fix: "git config user.signingkey ~/.ssh/id_ed25519.pub"}
	}
	return doctor.Finding{Msg: "ralph's commits here will not be signed (" + g.describe() + "); a ruleset requiring signed commits would refuse them"}
}
