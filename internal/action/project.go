package action

import (
	"context"
	"net/http"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/project"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// attachBoard mirrors every state change on the project board of the config's project: section, with the
// project_token input: the Actions token cannot reach Projects (V2).
func (r *runner) attachBoard(eng *engine.Engine, cfg config.Config, endpoints ghapi.Endpoints, transport http.RoundTripper) error {
	token := strings.TrimSpace(r.a.GetInput("project_token"))
	if token != "" {
		r.a.AddMask(token)
		// The agent must not see it either.
		eng.Secrets = append(eng.Secrets, token)
	}
	if cfg.Project == nil {
		return nil
	}
	if token == "" {
		r.a.Warningf("project: is set in the config, but the project_token input is empty, so the board is not updated: " +
			"the Actions token (GITHUB_TOKEN) cannot reach Projects. Store a token that can (a classic token with the project scope, " +
			"or a fine-grained token or GitHub App with Projects read and write) as a secret and pass it: " +
			"`project_token: ${{ secrets.RALPH_PROJECT_TOKEN }}`")
		return nil
	}
	b, err := project.New(project.Options{GraphQL: endpoints.GraphQL, Token: token, Transport: transport,
		Owner: cfg.Project.Owner, Number: cfg.Project.Number, Field: cfg.Project.Field})
	if err != nil {
		return err
	}
	eng.OnState = func(ctx context.Context, issueNodeID string, _ int, to workflow.State) error {
		return b.SetState(ctx, issueNodeID, to)
	}
	return nil
}
