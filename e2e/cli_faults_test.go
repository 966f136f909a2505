package e2e

// The laptop door when GitHub fails: gh ralph advance run against a server that fails one kind of request
// for the whole run (an outage longer than ralph's retries), then again once it answers. The first run
// ends with an error that says what to run next and leaves no lock; the second finishes the step without
// running the agent again.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// pushesRef says whether a receive-pack request updates ref (its commands name it), leaving its body
// readable for the server.
func pushesRef(r *http.Request, ref string) bool {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return err == nil && bytes.Contains(b, []byte(ref))
}

func TestCLIAdvanceOutage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// fail installs the outage; on says whether it is on.
		fail func(e *cliEnv, on *atomic.Bool)
	}{
		{"the push of the branch", func(e *cliEnv, on *atomic.Bool) {
			e.srv.GitFaults(func(service string, r *http.Request) githubtest.GitFault {
				if on.Load() && service == "git-receive-pack" && pushesRef(r, "refs/heads/ralph/") {
					return githubtest.GitFault{Status: http.StatusBadGateway}
				}
				return githubtest.GitFault{}
			})
		}},
		{"the artifact comment", func(e *cliEnv, on *atomic.Bool) {
			e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if !on.Load() || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/comments") {
					return false
				}
				b, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(b))
				if !bytes.Contains(b, []byte("Research Document")) {
					return false
				}
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`))
				return true
			})
		}},
		{"the status comment", func(e *cliEnv, on *atomic.Bool) {
			e.srv.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if !on.Load() || !strings.Contains(r.URL.Path, "/comments") || r.Method == http.MethodGet {
					return false
				}
				b, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(b))
				if !bytes.Contains(b, []byte("ralph:status")) {
					return false
				}
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"message":"Service Unavailable"}`))
				return true
			})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// As a person runs gh ralph: a normal user, whose ralph keeps its repository between runs.
			srv := githubtest.New(t, githubtest.Options{APIPrefix: "/api/v3", TLS: true, GitHTTP: true})
			e := newCLIEnvOnAs(t, asUser, srv, agentConfig(t), cliVars(t, srv))
			e.git(e.work, "remote", "set-url", "origin", srv.GitURL())
			n := e.srv.CreateIssue(maintainer, "Add a greeting", "Say hello.")
			e.srv.AddLabel(n, workflow.LabelBuild, maintainer)
			var on atomic.Bool
			on.Store(true)
			tc.fail(e, &on)

			r := e.cli(binary, "advance", fmt.Sprint(n))
			on.Store(false)
			if r.exit != 1 {
				t.Errorf("advance during the outage: exit %d, want 1\n%s%s", r.exit, r.stdout, r.stderr)
			}
			if want := fmt.Sprintf("gh ralph advance %d", n); !strings.Contains(r.stderr, want) {
				t.Errorf("the error does not say to run %q again:\n%s", want, r.stderr)
			}
			if refs := e.lockRefs(); len(refs) != 0 {
				t.Errorf("the lock was left: %v", refs)
			}
			e.invariants(n)

			r = e.cli(binary, "advance", fmt.Sprint(n))
			if r.exit != 0 {
				t.Fatalf("advance after the outage: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
			}
			e.wantState(n, workflow.ReadyForPlan)
			e.invariants(n)
			if got := e.invocations(); len(got) != 1 {
				t.Errorf("the agent ran %d times (%v), want once: its work was redone", len(got), got)
			}
			if got := e.commentsStarting(n, "## Research Document"); got != 1 {
				t.Errorf("%d research comments, want 1", got)
			}
			if subjects, _ := e.branch("ralph/1-add-a-greeting"); len(matching(subjects, "(?i)research")) != 1 {
				t.Errorf("branch commits %v, want one research commit", subjects)
			}
		})
	}
}
