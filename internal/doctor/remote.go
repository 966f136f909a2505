package doctor

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/git"
)

// Remote tries the git transport as ralph's steps use it: ralph's own git (runner, with its environment
// allowlist and its CA bundle: compose.GitRunner), no config but its own, and the token it pushes with,
// reads the checkout's origin (git ls-remote). A host git cannot reach, a certificate it does not trust or
// a credential it is refused with is found here rather than in a step's first push.
func Remote(ctx context.Context, runner git.Runner, checkout string, auth git.Auth) Finding {
	tmp, err := os.MkdirTemp("", "ralph-doctor-")
	if err != nil {
		return problem("trying git: "+err.Error(), "")
	}
	defer os.RemoveAll(tmp)
	repo, err := git.Open(ctx, runner, filepath.Join(tmp, "git"), checkout, "", auth)
	if err != nil {
		return problem("reading the checkout's origin: "+err.Error(), "git remote add origin <the repository's URL>")
	}
	origin := showURL(repo.URL)
	if _, _, err := repo.RemoteHeads(ctx); err != nil {
		return remoteProblem(origin, err)
	}
	return ok("git reaches %s as ralph's steps do (ls-remote)", origin)
}

// remoteProblem says why ralph's git could not read origin, and what to do.
func remoteProblem(origin string, err error) Finding {
	why := err.Error()
	var ce *git.CommandError
	if errors.As(err, &ce) {
		why = lastLine(ce.Stderr)
	}
	msg := "ralph's git cannot read " + origin + ": " + why
	low := strings.ToLower(why)
	host := origin
	if u, err := url.Parse(origin); err == nil && u.Host != "" {
		host = u.Host
	}
	switch {
	case strings.Contains(low, "certificate") || strings.Contains(low, "ssl"):
		return problem(msg, "put the certificate of the CA that signed "+host+"'s (PEM) in a file and export SSL_CERT_FILE=<that file>: ralph's git trusts "+
			"what its API client trusts, the system's CAs and SSL_CERT_FILE's (not git config's http.sslCAInfo)")
	case strings.Contains(low, "could not read username") || strings.Contains(low, "authentication failed") ||
		strings.Contains(low, "401") || strings.Contains(low, "403") || strings.Contains(low, "invalid username"):
		return problem(msg, "ralph's git pushes with your gh token over https to "+host+": gh auth login -h "+host+" (or gh auth refresh), and check that origin is the repository")
	case strings.Contains(low, "permission denied (publickey)") || strings.Contains(low, "host key verification"):
		return problem(msg, "ralph's git uses your ssh agent (SSH_AUTH_SOCK) and no ssh config of git's: ssh-add your key, or set origin to the https URL")
	case strings.Contains(low, "could not resolve") || strings.Contains(low, "failed to connect") ||
		strings.Contains(low, "connection refused") || strings.Contains(low, "timed out") || strings.Contains(low, "proxy"):
		return problem(msg, "check the network; behind a proxy, export HTTPS_PROXY (ralph's git reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY, not git config's http.proxy)")
	}
	return problem(msg, "git ls-remote "+origin+" shows the same request as plain git")
}

// showURL is a remote without the credentials a URL may carry.
func showURL(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.User == nil {
		return remote
	}
	u.User = nil
	return u.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(strings.TrimPrefix(lines[len(lines)-1], "fatal: "))
}
