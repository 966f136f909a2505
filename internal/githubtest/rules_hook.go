package githubtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The push side of rulesets: the bare repository's pre-receive hook refuses, with GitHub's GH013 answer, a
// branch push that breaks one of these rules of a ruleset that applies to the branch: creation, update,
// required_signatures (a commit with no signature; API-made commits the server signs pass), branch_name_pattern,
// commit_message_pattern and file_path_restriction. The hook is written again whenever a ruleset is added.

// writeRulesHookLocked writes the hook for the rulesets now held (s.mu held).
func (s *Server) writeRulesHookLocked() {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# written by githubtest: the repository's rulesets, as GitHub enforces them on a push\n")
	b.WriteString("z=0000000000000000000000000000000000000000\n")
	b.WriteString(`matches() { # operator pattern text
	case "$1" in
	starts_with) case "$3" in "$2"*) return 0;; esac; return 1;;
	ends_with) case "$3" in *"$2") return 0;; esac; return 1;;
	contains) case "$3" in *"$2"*) return 0;; esac; return 1;;
	regex) printf '%s' "$3" | grep -Eq -- "$2";;
	esac
}
while read old new ref; do
	case "$ref" in refs/heads/*) ;; *) continue;; esac
	[ "$new" = "$z" ] && continue
	branch=${ref#refs/heads/}
	if [ "$old" = "$z" ]; then commits=$(git rev-list "$new" --not --all); else commits=$(git rev-list "$old..$new"); fi
	v=""
`)
	for _, rs := range s.rulesets {
		fmt.Fprintf(&b, "\tif %s && ! %s; then\n\t\t:\n", shellRefTest(rs.Include, s.opts.DefaultBranch), shellRefTest(rs.Exclude, s.opts.DefaultBranch))
		for _, r := range rs.Rules {
			b.WriteString(shellRuleCheck(r))
		}
		b.WriteString("\tfi\n")
	}
	fmt.Fprintf(&b, `	if [ -n "$v" ]; then
		printf 'error: GH013: Repository rule violations found for %%s.\n' "$ref" >&2
		printf 'Review all repository rules at %s/%s/%s/rules?ref=%%s\n\n' "$ref" >&2
		printf '%%b' "$v" >&2
		exit 1
	fi
done
exit 0
`, s.ServerURL, s.opts.Owner, s.opts.Repo)
	hooks := filepath.Join(s.BareRepo, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		s.t.Fatalf("githubtest: rules hook: %v", err)
	}
	if err := os.WriteFile(filepath.Join(hooks, "pre-receive"), []byte(b.String()), 0o755); err != nil {
		s.t.Fatalf("githubtest: rules hook: %v", err)
	}
}

// shellRefTest is a shell condition that holds when $ref is taken by one of patterns.
func shellRefTest(patterns []string, defaultBranch string) string {
	var alts []string
	for _, p := range patterns {
		switch p {
		case "~ALL":
			alts = append(alts, "*")
		case "~DEFAULT_BRANCH":
			alts = append(alts, shq("refs/heads/"+defaultBranch))
		default:
			// A shell pattern's * crosses slashes: ** and * both become it (the tests' patterns are
			// prefixes such as refs/heads/ralph/**).
			parts := strings.Split(strings.ReplaceAll(p, "**", "*"), "*")
			for i := range parts {
				parts[i] = shq(parts[i])
			}
			alts = append(alts, strings.Join(parts, "*"))
		}
	}
	if len(alts) == 0 {
		return "false"
	}
	return `{ case "$ref" in ` + strings.Join(alts, "|") + `) true;; *) false;; esac; }`
}

// shellRuleCheck is the shell that adds rule r's violations to $v.
func shellRuleCheck(r Rule) string {
	str := func(k string) string { s, _ := r.Parameters[k].(string); return s }
	test := func(text string) string {
		t := "matches " + shq(str("operator")) + " " + shq(str("pattern")) + " " + text
		if neg, _ := r.Parameters["negate"].(bool); neg {
			return t
		}
		return "! " + t
	}
	what := str("name")
	if what == "" {
		what = str("operator") + " " + str("pattern")
	}
	switch r.Type {
	case "creation":
		return "\t\t[ \"$old\" = \"$z\" ] && v=\"$v- Cannot create ref due to creations being restricted.\\n\"\n"
	case "update":
		return "\t\t[ \"$old\" != \"$z\" ] && v=\"$v- Cannot update this protected ref.\\n\"\n"
	case "required_signatures":
		return "\t\tfor c in $commits; do git cat-file commit \"$c\" | sed '/^$/q' | grep -q '^gpgsig' || v=\"$v- Commits must have verified signatures.\\n  Found 1 violation:\\n\\n  $c\\n\"; done\n"
	case "branch_name_pattern":
		return "\t\tif " + test(`"$branch"`) + "; then v=\"$v- Branch name must match the pattern " + shellEscapeDQ(what) + ".\\n\"; fi\n"
	case "commit_message_pattern":
		return "\t\tfor c in $commits; do if " + test(`"$(git log -1 --format=%B "$c")"`) + "; then v=\"$v- Commit message must match the pattern " + shellEscapeDQ(what) + ".\\n  Found 1 violation:\\n\\n  $c\\n\"; fi; done\n"
	case "file_path_restriction":
		var alts []string
		for _, p := range strs(r.Parameters["restricted_file_paths"]) {
			parts := strings.Split(strings.ReplaceAll(p, "**", "*"), "*")
			for i := range parts {
				parts[i] = shq(parts[i])
			}
			alts = append(alts, strings.Join(parts, "*"))
		}
		if len(alts) == 0 {
			return ""
		}
		return "\t\tfor c in $commits; do for f in $(git diff-tree --no-commit-id --name-only -r --root \"$c\"); do case \"$f\" in " +
			strings.Join(alts, "|") + ") v=\"$v- Cannot change restricted file paths.\\n  Found 1 violation:\\n\\n  $f\\n\";; esac; done; done\n"
	}
	return ""
}

// shq quotes s for the shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// shellEscapeDQ escapes s for a double-quoted shell string.
func shellEscapeDQ(s string) string {
	r := strings.NewReplacer(`\`, `\\\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return r.Replace(s)
}

// strs is a list parameter given as []string or as decoded JSON.
func strs(v any) []string {
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// writeSignedCommit stores a commit as GitHub's API makes one when no author, committer or signature is
// given: authored by the token's account, committed by GitHub, and signed (the signature is the server's
// stand-in for GitHub's web-flow key; the rules hook and Verified look only for it).
func (s *Server) writeSignedCommit(tree string, parents []string, message string) (string, error) {
	now := fmt.Sprintf("%d +0000", time.Now().Unix())
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com> %s\n", now)
	fmt.Fprintf(&b, "committer GitHub <noreply@github.com> %s\n", now)
	b.WriteString("gpgsig -----BEGIN PGP SIGNATURE-----\n \n githubtest web-flow signature\n -----END PGP SIGNATURE-----\n\n")
	b.WriteString(message)
	out, err := gitCommand(s.BareRepo, strings.NewReader(b.String()), "hash-object", "-t", "commit", "-w", "--stdin").Output()
	if err != nil {
		return "", fmt.Errorf("git hash-object: %w", err)
	}
	sha := strings.TrimSpace(string(out))
	s.mu.Lock()
	if s.signedCommits == nil {
		s.signedCommits = map[string]bool{}
	}
	s.signedCommits[sha] = true
	s.mu.Unlock()
	return sha, nil
}

// verificationJSON is a commit's verification as GitHub shows it.
func (s *Server) verificationJSON(sha string) map[string]any {
	s.mu.Lock()
	signed := s.signedCommits[sha]
	s.mu.Unlock()
	if signed {
		// As GitHub: the signature is the gpgsig header's value, the payload the commit object without it.
		if raw, err := gitCommand(s.BareRepo, nil, "cat-file", "commit", sha).Output(); err == nil {
			payload, signature := splitSignature(string(raw))
			return map[string]any{"verified": true, "reason": "valid", "signature": signature,
				"payload": payload, "verified_at": time.Now().UTC().Format(time.RFC3339)}
		}
	}
	return map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil}
}

// Verified says whether GitHub would show commit sha Verified: the server signed it.
func (s *Server) Verified(sha string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signedCommits[sha]
}

// ruleViolations applies the rulesets to a ref moved through the API, as GitHub does: "" when no rule
// refuses moving ref from old to sha, else GitHub's answer ("Repository rule violations found" and the
// rules).
func (s *Server) ruleViolations(ref, old, sha string) string {
	hook := filepath.Join(s.BareRepo, "hooks", "pre-receive")
	if _, err := os.Stat(hook); err != nil {
		return ""
	}
	cmd := exec.Command("sh", hook)
	cmd.Env = append(os.Environ(), "GIT_DIR="+s.BareRepo, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	cmd.Dir = s.BareRepo
	cmd.Stdin = strings.NewReader(old + " " + sha + " " + ref + "\n")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return ""
	}
	var rules []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "- ") {
			rules = append(rules, line)
		}
	}
	return "Repository rule violations found\n\n" + strings.Join(rules, "\n") + "\n"
}

// splitSignature splits a commit object into the object without its gpgsig header and that header's value
// (its continuation lines unindented, ending in a newline).
func splitSignature(raw string) (payload, signature string) {
	head, body, _ := strings.Cut(raw, "\n\n")
	var kept []string
	var sig strings.Builder
	in := false
	for _, line := range strings.Split(head, "\n") {
		switch {
		case strings.HasPrefix(line, "gpgsig "):
			in = true
			sig.WriteString(strings.TrimPrefix(line, "gpgsig ") + "\n")
		case in && strings.HasPrefix(line, " "):
			sig.WriteString(line[1:] + "\n")
		default:
			in = false
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n") + "\n\n" + body, sig.String()
}
