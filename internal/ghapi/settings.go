package ghapi

import (
	"context"
	"net/http"
	"strings"
)

// ActionsPermissions is the repository's GitHub Actions switch and which actions it allows.
type ActionsPermissions struct {
	Enabled        bool   `json:"enabled"`
	AllowedActions string `json:"allowed_actions"` // all, local_only or selected
	SHAPinning     bool   `json:"sha_pinning_required"`
}

// ActionsPermissions reads the repository's Actions permissions (GitHub answers only a repository admin).
func (c *Client) ActionsPermissions(ctx context.Context) (ActionsPermissions, error) {
	var p ActionsPermissions
	_, err := c.do(ctx, http.MethodGet, c.repoPath("actions", "permissions"), nil, &p)
	return p, err
}

// WorkflowPermissions is what the Actions token gets by default, and whether it may open pull requests.
type WorkflowPermissions struct {
	Default        string `json:"default_workflow_permissions"` // read or write
	CanCreatePulls bool   `json:"can_approve_pull_request_reviews"`
}

// WorkflowPermissions reads the Actions token's default permissions (GitHub answers only a repository
// admin).
func (c *Client) WorkflowPermissions(ctx context.Context) (WorkflowPermissions, error) {
	var p WorkflowPermissions
	_, err := c.do(ctx, http.MethodGet, c.repoPath("actions", "permissions", "workflow"), nil, &p)
	return p, err
}

// SecretNames lists the names of the Actions secrets a workflow of the repository can read: the
// repository's own and the organization's shared with it.
func (c *Client) SecretNames(ctx context.Context) ([]string, error) {
	var names []string
	for _, kind := range []string{"secrets", "organization-secrets"} {
		var page struct {
			Secrets []struct {
				Name string `json:"name"`
			} `json:"secrets"`
		}
		if _, err := c.do(ctx, http.MethodGet, c.repoPath("actions", kind)+"?per_page=100", nil, &page); err != nil {
			return nil, err
		}
		for _, s := range page.Secrets {
			names = append(names, s.Name)
		}
	}
	return names, nil
}

// Workflow is a workflow file GitHub knows on the default branch.
type Workflow struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Path  string `json:"path"`
	State string `json:"state"` // active, disabled_manually, disabled_inactivity, …
}

// Workflow reads a workflow by its file name ("ralph.yml"); ErrNotFound when the default branch has none.
func (c *Client) Workflow(ctx context.Context, file string) (Workflow, error) {
	var w Workflow
	_, err := c.do(ctx, http.MethodGet, c.repoPath("actions", "workflows", file), nil, &w)
	return w, err
}

// Access is what the token may do in the repository: the repository's permissions for its account, and,
// for a classic or OAuth token, its scopes (nil for other tokens, which do not say).
type Access struct {
	Admin, Push bool
	Scopes      []string
	// Private: the repository is private (or internal): what the agent reads there is not public.
	Private bool
}

// Access reads the repository with the token and says what the token may do there.
func (c *Client) Access(ctx context.Context) (Access, error) {
	var r struct {
		Permissions struct {
			Admin bool `json:"admin"`
			Push  bool `json:"push"`
		} `json:"permissions"`
		Private bool `json:"private"`
	}
	h, err := c.do(ctx, http.MethodGet, c.repoPath(), nil, &r)
	if err != nil {
		return Access{}, err
	}
	a := Access{Admin: r.Permissions.Admin, Push: r.Permissions.Push, Private: r.Private}
	if v, ok := h["X-Oauth-Scopes"]; ok {
		a.Scopes = []string{}
		for _, s := range strings.Split(strings.Join(v, ","), ",") {
			if s = strings.TrimSpace(s); s != "" {
				a.Scopes = append(a.Scopes, s)
			}
		}
	}
	return a, nil
}

// hint says what to do about an answer GitHub gives when the repository's settings or the token's
// permissions stop ralph; "" for any other.
func hint(status int, message string) string {
	switch {
	case strings.Contains(message, "not permitted to create or approve pull requests"):
		return "allow it in the repository's Settings → Actions → General → Workflow permissions: \"Allow GitHub Actions to create and approve pull requests\" " +
			"(or give ralph a GitHub App's token, which also lets your CI run on its pull requests; see the README: CI on ralph's pull requests)"
	case status == http.StatusForbidden && strings.Contains(message, "Resource not accessible by integration"):
		return "the token lacks a permission ralph needs: give the workflow `permissions:` with contents, issues, pull-requests and actions: write " +
			"(a GitHub App needs the same repository permissions); gh ralph doctor checks them"
	}
	return ""
}
