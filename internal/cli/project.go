package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/project"
)

// scopeHint is what to do when gh's token cannot reach projects.
const scopeHint = "run `gh auth refresh -s project` to give gh's token the project scope"

// board is the config's project board, reached with the user's gh token (nil when the config has none).
func (s *session) board(cfg config.Config) (*project.Board, error) {
	if cfg.Project == nil {
		return nil, nil
	}
	return compose.Board(cfg, s.gh.Endpoints(), s.token, s.transport)
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
	cfg, err := compose.LoadConfig(root, "")
	if err != nil {
		return cfg, err
	}
	if cfg.Project == nil {
		return cfg, fmt.Errorf("--project needs a project: section in %s naming the board, e.g.\n\n  project:\n    owner: OWNER\n    number: 3\n\nnothing was changed", config.DefaultPath)
	}
	return cfg, nil
}
