package githubtest

import (
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Git over HTTPS, as GitHub serves it: with Options.GitHTTP, /<owner>/<repo>.git/ is git's smart HTTP
// protocol for the server's bare repository (git http-backend, as a CGI program), and only a request that
// gives the token as a basic-auth password (any user name: ralph sends x-access-token) reaches it. A test
// then makes a checkout whose origin is GitURL, so that every git command goes through the server's TLS.

// GitURL is the repository's HTTPS (or HTTP) clone URL; "" unless Options.GitHTTP.
func (s *Server) GitURL() string {
	if !s.opts.GitHTTP {
		return ""
	}
	return s.ServerURL + "/" + s.opts.Owner + "/" + s.opts.Repo + ".git"
}

// gitPrefix is the path every smart-HTTP request starts with.
func (s *Server) gitPrefix() string { return "/" + s.opts.Owner + "/" + s.opts.Repo + ".git/" }

// isGitHTTP says whether r is for the repository's smart-HTTP endpoints.
func (s *Server) isGitHTTP(r *http.Request) bool {
	return s.opts.GitHTTP && strings.HasPrefix(r.URL.EscapedPath(), s.gitPrefix())
}

// gitServices are the only paths git's smart HTTP protocol uses (after /<owner>/<repo>.git).
var gitServices = map[string]bool{"info/refs": true, "git-upload-pack": true, "git-receive-pack": true}

// serveGitHTTP answers one smart-HTTP request, pinned to the bare repository: no other path of the
// project root is ever named to http-backend.
func (s *Server) serveGitHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.EscapedPath(), s.gitPrefix())
	if !gitServices[rest] {
		http.NotFound(w, r)
		return
	}
	if _, pass, ok := r.BasicAuth(); !ok || pass != s.opts.Token {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token. Password authentication is not supported for Git operations.", http.StatusUnauthorized)
		return
	}
	w, done, lose := s.gitFault(w, r, rest)
	if done {
		return
	}
	if lose {
		// git does the work; the connection then closes with no answer (net/http sends nothing not flushed).
		defer func() { panic(http.ErrAbortHandler) }()
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Root: "/" + s.opts.Owner,
		Dir:  filepath.Dir(s.BareRepo),
		Env: []string{
			"GIT_PROJECT_ROOT=" + filepath.Dir(s.BareRepo),
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
			// A push is authenticated above (http-backend itself allows one only with REMOTE_USER set).
			"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=http.receivepack", "GIT_CONFIG_VALUE_0=true",
			// A test may give the repository to the user it runs ralph as (e2e's runAs): the server's git
			// serves it all the same.
			"GIT_CONFIG_KEY_1=safe.directory", "GIT_CONFIG_VALUE_1=*",
		},
		InheritEnv: []string{"PATH"},
	}
	// The bare repository is named by its base name under the project root, which holds nothing else.
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + s.opts.Owner + "/" + filepath.Base(s.BareRepo) + "/" + rest
	r2.URL.RawPath = ""
	h.ServeHTTP(w, r2)
}
