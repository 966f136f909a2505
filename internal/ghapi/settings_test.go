package ghapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

func TestSettings(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{})
	c, err := ghapi.New(ghapi.Options{Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token: "test-token", Owner: "octo", Repo: "demo", Transport: srv.Client().Transport})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv.SetWorkflowPermissions("write", false)
	wp, err := c.WorkflowPermissions(ctx)
	if err != nil || wp.Default != "write" || wp.CanCreatePulls {
		t.Errorf("WorkflowPermissions = %+v, %v", wp, err)
	}
	ap, err := c.ActionsPermissions(ctx)
	if err != nil || !ap.Enabled || ap.AllowedActions != "all" {
		t.Errorf("ActionsPermissions = %+v, %v", ap, err)
	}
	srv.SetSecret("ANTHROPIC_API_KEY", "x")
	names, err := c.SecretNames(ctx)
	if err != nil || strings.Join(names, ",") != "ANTHROPIC_API_KEY" {
		t.Errorf("SecretNames = %v, %v", names, err)
	}
	if _, err := c.Workflow(ctx, "ralph.yml"); !errors.Is(err, ghapi.ErrNotFound) {
		t.Errorf("Workflow of a file not pushed: %v", err)
	}
	srv.AddWorkflow(".github/workflows/ralph.yml", "ralph")
	if w, err := c.Workflow(ctx, "ralph.yml"); err != nil || w.State != "active" || w.Path != ".github/workflows/ralph.yml" {
		t.Errorf("Workflow = %+v, %v", w, err)
	}
	if a, err := c.Access(ctx); err != nil || !a.Push || a.Scopes != nil || a.Private {
		t.Errorf("Access = %+v, %v", a, err)
	}
	// The Actions token refused a pull request: the error says where to allow it.
	_, err = c.CreatePull(ctx, ghapi.NewPull{Title: "x", Head: "main", Base: "main"})
	if err == nil || !strings.Contains(err.Error(), "Settings → Actions → General → Workflow permissions") {
		t.Errorf("CreatePull where Actions may not: %v", err)
	}
}

func TestAccessSaysPrivate(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t, githubtest.Options{Private: true})
	c := newClient(t, srv)
	if a, err := c.Access(context.Background()); err != nil || !a.Private {
		t.Errorf("Access of a private repository = %+v, %v", a, err)
	}
}
