package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The repository's side: its labels, its Actions settings and its secrets, as ralph's token can read them.

// GitHub is what the checks read of GitHub; *ghapi.Client implements it.
type GitHub interface {
	Access(ctx context.Context) (ghapi.Access, error)
	Labels(ctx context.Context) ([]ghapi.Label, error)
	Workflow(ctx context.Context, file string) (ghapi.Workflow, error)
	SecretNames(ctx context.Context) ([]string, error)
	ActionsPermissions(ctx context.Context) (ghapi.ActionsPermissions, error)
	WorkflowPermissions(ctx context.Context) (ghapi.WorkflowPermissions, error)
	Owner() string
	Repo() string
	Endpoints() ghapi.Endpoints
}

// LabelNames are ralph's labels: ralph:build, the state labels and ralph:needs-iteration.
func LabelNames() []string {
	names := []string{workflow.LabelBuild}
	for _, s := range workflow.States() {
		names = append(names, s.Label())
	}
	return append(names, workflow.LabelNeedsIteration)
}

// Repository checks, with the person's token, what ralph needs of the repository on GitHub: that the token
// may push (and, a classic token, push workflow files and reach a board), ralph's labels, the workflow on
// the default branch, the secrets it reads, and the Actions settings. A token GitHub refuses (401) is the
// error, and nothing else is asked: every other request would be refused the same way.
func Repository(ctx context.Context, gh GitHub, cfg config.Config, wf *Workflow) ([]Finding, error) {
	full := gh.Owner() + "/" + gh.Repo()
	var fs []Finding
	access, err := gh.Access(ctx)
	var api *ghapi.Error
	if errors.As(err, &api) && api.Status == 401 {
		return nil, fmt.Errorf("checking %s: %w", full, err)
	}
	switch {
	case err != nil:
		fs = append(fs, problem("reading "+full+": "+err.Error(), ""))
	case !access.Push:
		fs = append(fs, problem("your token cannot push to "+full, "ask for write access: ralph pushes branches and writes issues as you"))
	default:
		fs = append(fs, ok("your token can push to %s", full))
	}
	if access.Scopes != nil {
		if !slices.Contains(access.Scopes, "workflow") {
			fs = append(fs, problem("your token lacks the workflow scope, which pushing .github/workflows/ralph.yml needs", "gh auth refresh -s workflow"))
		}
		if cfg.Project != nil && !slices.Contains(access.Scopes, "project") {
			fs = append(fs, problem("your token lacks the project scope, which the board of project: needs", "gh auth refresh -s project"))
		}
	}
	fs = For(Machine, fs)
	if f, ok := Registries(access.Private, cfg); ok {
		fs = append(fs, f)
	}
	have, err := gh.Labels(ctx)
	if err != nil {
		fs = append(fs, problem("listing the labels: "+err.Error(), ""))
	} else {
		exists := map[string]bool{}
		for _, l := range have {
			exists[strings.ToLower(l.Name)] = true
		}
		var missing []string
		for _, n := range LabelNames() {
			if !exists[strings.ToLower(n)] {
				missing = append(missing, n)
			}
		}
		switch {
		case len(missing) == len(LabelNames()):
			fs = append(fs, problem(fmt.Sprintf("none of ralph's %d labels exist", len(missing)), "gh ralph init creates them"))
		case len(missing) > 0:
			fs = append(fs, problem(fmt.Sprintf("%d of ralph's %d labels are missing (%s)", len(missing), len(LabelNames()), strings.Join(missing, ", ")), "gh ralph init creates them"))
		default:
			fs = append(fs, ok("all %d of ralph's labels exist", len(LabelNames())))
		}
	}
	var action []Finding
	if wf != nil {
		w, err := gh.Workflow(ctx, wf.File())
		switch {
		case errors.Is(err, ghapi.ErrNotFound):
			action = append(action, problem(wf.Path+" is not on the default branch on GitHub, so nothing runs it", "commit and push it to the default branch"))
		case err != nil:
			action = append(action, problem("reading the workflow "+wf.File()+": "+err.Error(), ""))
		case w.State != "active":
			action = append(action, problem(fmt.Sprintf("the workflow %s is %s", wf.Path, strings.ReplaceAll(w.State, "_", " ")), "gh workflow enable "+wf.File()))
		default:
			action = append(action, ok("%s is active on GitHub", wf.Path))
		}
		action = append(action, secrets(ctx, gh, wf)...)
	}
	action = append(action, Settings(ctx, gh, wf)...)
	return append(fs, For(Action, action)...), nil
}

// Registries suggests, for a private repository whose agent reaches every package registry, narrowing
// them: a registry is a way out for what the agent read (a module proxy fetches any path from its origin).
func Registries(private bool, cfg config.Config) (Finding, bool) {
	if !private || cfg.Network.Mode == config.NetworkOpen || cfg.Network.Registries != nil {
		return Finding{}, false
	}
	return Finding{Warn: true, Msg: "the repository is private and its agent reaches every package registry, through which it could send out what it read (a module proxy fetches any path from its origin)",
		Fix: "list only the registries its builds need in network.registries in .github/ralph.yml ([] for none)"}, true
}

// Settings checks the repository's Actions settings that ralph needs: Actions enabled for its actions, the
// Actions token's permissions (when the workflow sets none), and, when ralph runs with the Actions token,
// that Actions may open pull requests.
func Settings(ctx context.Context, gh GitHub, wf *Workflow) []Finding {
	full := gh.Owner() + "/" + gh.Repo()
	settings := strings.TrimSuffix(gh.Endpoints().Server, "/") + "/" + full + "/settings/actions"
	var fs []Finding
	ap, err := gh.ActionsPermissions(ctx)
	switch {
	case err != nil:
		fs = append(fs, notReadable("the repository's Actions permissions", err, settings))
	case !ap.Enabled:
		fs = append(fs, problem("GitHub Actions are disabled in "+full, "enable them in "+settings+" (Actions permissions)"))
	case ap.AllowedActions == "local_only":
		fs = append(fs, problem(full+" allows only its own actions, so "+agent.ActionRef+" and actions/checkout cannot run", "allow them in "+settings+" (Actions permissions)"))
	default:
		fs = append(fs, ok("GitHub Actions are enabled (%s actions allowed)", orAll(ap.AllowedActions)))
	}
	if ap.SHAPinning && wf != nil {
		fs = append(fs, ok("the repository requires actions pinned by commit SHA: keep every uses: in %s pinned", wf.Path))
	}
	wp, err := gh.WorkflowPermissions(ctx)
	switch {
	case err != nil:
		fs = append(fs, notReadable("the Actions token's default permissions", err, settings))
	default:
		if wf != nil && wf.Permissions == nil && wp.Default != "write" {
			fs = append(fs, problem(wf.Path+" sets no permissions: and the Actions token is read-only by default here",
				"add permissions: contents, issues, pull-requests, actions: write to "+wf.Path+" (as gh ralph init writes it)"))
		}
		if wf == nil || wf.ActionsToken() {
			if !wp.CanCreatePulls {
				fs = append(fs, problem("GitHub Actions may not create pull requests in "+full+", so ralph's pr step would fail",
					"in "+settings+" under Workflow permissions, check \"Allow GitHub Actions to create and approve pull requests\" "+
						"(or: gh api -X PUT repos/"+full+"/actions/permissions/workflow -F can_approve_pull_request_reviews=true), or give ralph a GitHub App's token"))
			} else {
				fs = append(fs, ok("GitHub Actions may create pull requests; they start no pull_request workflows, so your CI does not run on them (README: CI on ralph's pull requests)"))
			}
		}
	}
	return fs
}

func orAll(s string) string {
	if s == "" {
		return "all"
	}
	return s
}

// notReadable: GitHub answers the Actions settings only to a repository admin.
func notReadable(what string, err error, settings string) Finding {
	var api *ghapi.Error
	if errors.As(err, &api) && (api.Status == 403 || api.Status == 404) {
		// Not a problem of the setup: someone who is no admin cannot see it, and the Action may well work.
		return Finding{Warn: true, Msg: "cannot read " + what + " (GitHub shows them only to admins)", Fix: "ask an admin to check " + settings}
	}
	return problem("reading "+what+": "+err.Error(), "")
}

// secrets checks that the secrets the workflow gives ralph's step exist.
func secrets(ctx context.Context, gh GitHub, wf *Workflow) []Finding {
	want := map[string]string{} // secret -> what it is for
	for k, v := range wf.Env {
		if s := SecretOf(v); s != "" {
			want[s] = "env " + k
		}
	}
	for _, in := range []string{"token", "project_token"} {
		if s := SecretOf(wf.With[in]); s != "" {
			want[s] = "input " + in
		}
	}
	if len(want) == 0 {
		return nil
	}
	names, err := gh.SecretNames(ctx)
	var api *ghapi.Error
	if errors.As(err, &api) && (api.Status == 403 || api.Status == 404) {
		// Not a problem of the setup: GitHub lists the secrets only to those who may manage them.
		return []Finding{{Warn: true, Msg: "cannot list the repository's secrets (GitHub lists them only to people who may manage them)",
			Fix: "ask an admin to check that " + setPhrase(sortedKeys(want)) + " (gh secret list)"}}
	}
	if err != nil {
		return []Finding{problem("listing the repository's secrets: "+err.Error(), "check that "+setPhrase(sortedKeys(want))+" (gh secret list)")}
	}
	var fs []Finding
	for _, s := range sortedKeys(want) {
		if slices.Contains(names, s) {
			fs = append(fs, ok("the secret %s is set (%s of ralph's step)", s, want[s]))
			continue
		}
		fs = append(fs, problem(fmt.Sprintf("the secret %s, which %s gives ralph's step as %s, is not set", s, wf.Path, want[s]), "gh secret set "+s))
	}
	return fs
}

// setPhrase is "A is set", "A, B are set".
func setPhrase(names []string) string {
	if len(names) == 1 {
		return names[0] + " is set"
	}
	return strings.Join(names, ", ") + " are set"
}
