package cli

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// The files init writes. templates/workflow.yml is examples/ralph.yml (a test keeps them equal).
//
//go:embed templates/workflow.yml templates/config.yml
var templates embed.FS

// WorkflowPath is where init writes the workflow.
const WorkflowPath = ".github/workflows/ralph.yml"

// InitOptions are `gh ralph init`'s.
type InitOptions struct {
	Repo  string
	Force bool
	// Project also creates the state field on the board of the config's project: section (a config that
	// differs from init's is then kept, not an error: it is where the board is named).
	Project bool
}

// NewCmdInit builds `gh ralph init [--force]`.
func NewCmdInit(f *Factory, runF func(context.Context, *InitOptions) error) *cobra.Command {
	opts := &InitOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Set up ralph in this repository: the workflow, the config and the labels",
		Long: `Write .github/workflows/ralph.yml (ralph's workflow: the ralph:build label, /ralph comments,
its own workflow_dispatch chain, an hourly sweep and closed pull requests, one run at a time per
issue, least-privilege permissions) and .github/ralph.yml (every setting at its default, with
comments), and create ralph's labels in the repository with their colours and descriptions.

init can be run again: a file that is already as init writes it, and a label that exists, are
left alone. A file you changed is not overwritten unless you pass --force. Commit and push the
two files yourself.

With --project, init also creates the single-select field of the project board named in
.github/ralph.yml (project: owner, number, field) with the 11 workflow states as options; a field
that exists is left alone. gh's token needs the project scope: gh auth refresh -s project.`,
		Example: `  $ gh ralph init
  $ gh ralph init --force
  $ gh ralph init --project`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo, _ = cmd.Flags().GetString("repo")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return initRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "Overwrite files that differ from what init writes")
	cmd.Flags().BoolVar(&opts.Project, "project", false, "Also create the state field on the config's project board")
	return cmd
}

// Labels are ralph's labels as init creates them.
func Labels() []ghapi.Label {
	desc := map[workflow.State]string{
		workflow.Backlog:            "ralph: waiting for triage",
		workflow.ResearchNeeded:     "ralph: waiting for the research step",
		workflow.ResearchInProgress: "ralph: a run is researching",
		workflow.ReadyForPlan:       "ralph: waiting for the plan step",
		workflow.PlanInProgress:     "ralph: a run is planning",
		workflow.PlanInReview:       "ralph: the plan is being reviewed",
		workflow.InProgress:         "ralph: implementing, one phase per run",
		workflow.InReview:           "ralph: the pull request is open for review",
		workflow.Done:               "ralph: merged",
		workflow.HumanNeeded:        "ralph: stopped; a person is needed",
		workflow.Canceled:           "ralph: triage decided not to do it",
	}
	color := map[workflow.Kind]string{workflow.Waiting: "c5def5", workflow.Lock: "fbca04", workflow.Gate: "d93f0b", workflow.Terminal: "0e8a16"}
	labels := []ghapi.Label{{Name: workflow.LabelBuild, Color: "5319e7", Description: "ralph: enrolled; ralph works on this issue"}}
	for _, s := range workflow.States() {
		c := color[s.Kind()]
		switch s {
		case workflow.HumanNeeded:
			c = "b60205"
		case workflow.Canceled:
			c = "cccccc"
		}
		labels = append(labels, ghapi.Label{Name: s.Label(), Color: c, Description: desc[s]})
	}
	return append(labels, ghapi.Label{Name: workflow.LabelNeedsIteration, Color: "f9d0c4", Description: "ralph: the last plan was sent back"})
}

// initFile is one file init writes.
type initFile struct {
	path    string // relative to the checkout, slash-separated
	content []byte
}

func initFiles() []initFile {
	wf, err := templates.ReadFile("templates/workflow.yml")
	if err != nil {
		panic(err) // embedded
	}
	cfg, err := templates.ReadFile("templates/config.yml")
	if err != nil {
		panic(err)
	}
	return []initFile{{WorkflowPath, wf}, {config.DefaultPath, cfg}}
}

func initRun(ctx context.Context, f *Factory, opts *InitOptions) error {
	root, err := f.checkout(ctx)
	if err != nil {
		return err
	}
	// Resolve the repository and token first: a failure then changes nothing.
	s, err := f.session(opts.Repo)
	if err != nil {
		return err
	}
	var cfg config.Config
	if opts.Project {
		if cfg, err = projectConfig(root); err != nil { // project.go
			return err
		}
	}
	files := initFiles()
	type plan struct {
		file   initFile
		action string // create, unchanged, overwrite, keep
	}
	var plans []plan
	var changed []string
	for _, fl := range files {
		p := filepath.Join(root, filepath.FromSlash(fl.path))
		old, err := os.ReadFile(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			plans = append(plans, plan{fl, "create"})
		case err != nil:
			return err
		case bytes.Equal(old, fl.content):
			plans = append(plans, plan{fl, "unchanged"})
		case opts.Force:
			plans = append(plans, plan{fl, "overwrite"})
		case opts.Project:
			plans = append(plans, plan{fl, "keep"})
		default:
			changed = append(changed, fl.path)
		}
	}
	if len(changed) > 0 {
		return fmt.Errorf("%s already exist(s) and differ(s) from what init writes; nothing was changed. Use --force to overwrite", strings.Join(changed, " and "))
	}
	for _, p := range plans {
		if p.action == "keep" {
			fmt.Fprintf(f.Stderr, "  %s differs from what init writes; kept (--force overwrites it)\n", p.file.path)
			continue
		}
		if p.action == "unchanged" {
			fmt.Fprintf(f.Stderr, "  %s is up to date\n", p.file.path)
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(p.file.path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, p.file.content, 0o644); err != nil {
			return err
		}
		verb := "wrote"
		if p.action == "overwrite" {
			verb = "overwrote"
		}
		fmt.Fprintf(f.Stdout, "%s %s\n", verb, p.file.path)
	}
	have, err := s.gh.Labels(ctx)
	if err != nil {
		return fmt.Errorf("listing the labels of %s: %w", s.fullName(), err)
	}
	exists := map[string]bool{}
	for _, l := range have {
		exists[strings.ToLower(l.Name)] = true
	}
	created := 0
	for _, l := range Labels() {
		if exists[strings.ToLower(l.Name)] {
			continue
		}
		if err := s.gh.CreateLabel(ctx, l); err != nil {
			return fmt.Errorf("creating the label %s: %w", l.Name, err)
		}
		created++
		fmt.Fprintf(f.Stdout, "created label %s\n", l.Name)
	}
	if created == 0 {
		fmt.Fprintf(f.Stderr, "  all %d labels exist in %s\n", len(Labels()), s.fullName())
	}
	if opts.Project {
		if err := s.ensureBoardField(ctx, cfg); err != nil {
			return err
		}
	}
	fmt.Fprintf(f.Stderr, "next: commit and push %s and %s, set agent: in %s, then gh ralph enroll N\n", WorkflowPath, config.DefaultPath, config.DefaultPath)
	return nil
}
