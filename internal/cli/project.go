package cli

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/project"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// scopeHint is what to do when gh's token cannot reach projects.
const scopeHint = "run `gh auth refresh -s project` to give gh's token the project scope"

// board is the config's project board, reached with the user's gh token (nil when the config has none).
func (s *session) board(cfg config.Config) (*project.Board, error) {
	if cfg.Project == nil {
		return nil, nil
	}
	transport, err := ghapi.DefaultTransport(s.f.Getenv)
	if err != nil {
		return nil, err
	}
	return project.New(project.Options{GraphQL: s.gh.Endpoints().GraphQL, Token: s.token, Transport: transport,
		Owner: cfg.Project.Owner, Number: cfg.Project.Number, Field: cfg.Project.Field})
}

// attachBoard mirrors every state change of eng on the config's project board. A token without the project
// scope is reported once, with the command that fixes it, and the board is left alone after that.
func (s *session) attachBoard(eng *engine.Engine, cfg config.Config) error {
	b, err := s.board(cfg)
	if err != nil || b == nil {
		return err
	}
	var denied atomic.Bool
	eng.OnState = func(ctx context.Context, issueNodeID string, _ int, to workflow.State) error {
		if denied.Load() {
			return nil
		}
		err := b.SetState(ctx, issueNodeID, to)
		if errors.Is(err, project.ErrNoAccess) {
			denied.Store(true)
			return fmt.Errorf("%w; %s", err, scopeHint)
		}
		return err
	}
	return nil
}

// ensureBoardField is `gh ralph init --project`: the state field with its 11 options on the config's board.
func (s *session) ensureBoardField(ctx context.Context, cfg config.Config) error {
	b, err := s.board(cfg)
	if err != nil {
		return err
	}
	created, err := b.EnsureField(ctx)
	switch {
	case errors.Is(err, project.ErrNoAccess):
		return fmt.Errorf("%w; %s", err, scopeHint)
	case err != nil:
		return err
	case created:
		fmt.Fprintf(s.f.Stdout, "created %s with %d options\n", b, len(project.StateOptions()))
	default:
		fmt.Fprintf(s.f.Stderr, "  %s exists with all %d options\n", b, len(project.StateOptions()))
	}
	return nil
}

// projectConfig reads the checkout's config for `init --project`, which needs its project: section.
func projectConfig(root string) (config.Config, error) {
	cfg, err := loadConfig(root)
	if err != nil {
		return cfg, err
	}
	if cfg.Project == nil {
		return cfg, fmt.Errorf("--project needs a project: section in %s naming the board, e.g.\n\n  project:\n    owner: OWNER\n    number: 3\n\nnothing was changed", config.DefaultPath)
	}
	return cfg, nil
}
