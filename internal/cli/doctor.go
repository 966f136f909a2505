package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/agent"
	"github.com/ralph-dev/gh-ralph/internal/compose"
	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/doctor"
	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/git"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/record"
)

// DoctorOptions are `gh ralph doctor`'s.
type DoctorOptions struct {
	Repo string
}

// NewCmdDoctor builds `gh ralph doctor`.
func NewCmdDoctor(f *Factory, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that ralph can run here and in GitHub Actions, and say what to fix",
		Long: `Check everything ralph needs, one line each, and say for every problem what to do:

- .github/ralph.yml is valid;
- the agent: its CLI is on your PATH (with its version), the API key variables agent.env passes
  through are set here, and the agent's boundary can be set up (what gh ralph advance needs);
- the workflow that runs ralph: it exists, can be dispatched (for the chain), gives the Actions
  token contents, issues, pull-requests and actions: write, passes the API key and, with a board,
  the project token to ralph's step;
- on GitHub: your token may push, ralph's labels exist, the workflow is on the default branch and
  active, the secrets it reads are set, GitHub Actions are enabled and may create pull requests;
- git: ralph's own git (no git config of yours; the system's CAs and SSL_CERT_FILE's, as its API
  client) reads the checkout's origin with the token it pushes with.

The checks are grouped by door: both doors (the config, the labels, the rules), the Action (the
workflow, its secrets, the Actions settings) and this machine (the agent's CLI and key, your token,
your git). What only this machine lacks, and settings or secrets only an admin can read, are
warnings (!): someone who uses the Action alone, or is no admin, can reach a clean result.

The Action runs the checks that cost no request at the start of every run, before it writes
anything. Exit status: 0 when nothing is wrong, 1 when something is, 4 when you are not logged in.`,
		Example: `  $ gh ralph doctor
  $ gh ralph doctor -R octo/demo`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repo, _ = cmd.Flags().GetString("repo")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return doctorRun(cmd.Context(), f, opts)
		},
	}
	addRepoFlag(cmd)
	return cmd
}

func doctorRun(ctx context.Context, f *Factory, opts *DoctorOptions) error {
	root, err := f.checkout(ctx)
	if err != nil {
		return err
	}
	s, err := f.session(opts.Repo)
	if err != nil {
		return err
	}
	var findings []doctor.Finding
	cfg, cfgErr := s.loadConfig(ctx, root)
	var foreign *foreignFilesError
	switch _, statErr := os.Stat(filepath.Join(root, config.DefaultPath)); {
	case errors.As(cfgErr, &foreign):
		findings = append(findings, doctor.Finding{Problem: true, Msg: foreign.Msg, Fix: foreign.Fix + "; the agent is checked once the config is the default branch's"})
		cfg = config.Default()
	case cfgErr != nil:
		const fix = "fix that line (the README's Configuration section lists every key); the agent is checked once the config is valid"
		problems := config.Problems(cfgErr)
		if len(problems) == 0 {
			findings = append(findings, doctor.Finding{Problem: true, Msg: cfgErr.Error(), Fix: fix})
		}
		for _, p := range problems { // each on its line, in the file's order
			findings = append(findings, doctor.Finding{Problem: true, Msg: p.Error(), Fix: fix})
		}
		cfg = config.Default()
	case statErr != nil:
		findings = append(findings, doctor.Finding{Problem: true, Msg: config.DefaultPath + " does not exist, so ralph runs on the defaults (agent: claude, with no API key)", Fix: "gh ralph init writes it"})
	default:
		findings = append(findings, doctor.Finding{Msg: config.DefaultPath + " is valid"})
	}
	findings = append(findings, doctor.Documents(cfg))
	wf, err := doctor.FindWorkflow(root)
	if err != nil {
		findings = append(findings, doctor.Finding{Problem: true, Msg: err.Error(), Fix: "fix the workflow's YAML (actionlint shows where)", Door: doctor.Action})
	} else {
		doctor.ResolveChain(root, wf, cfg)
		doctor.ResolveWorkflowRun(root, wf)
		findings = append(findings, doctor.For(doctor.Action, doctor.WorkflowFile(wf, cfg))...)
	}
	// As gh ralph advance would run the agent here (it runs as you; as root, as a user of its own, who may
	// run what is open to every user and the toolchains under your home): the boundary advance's own check
	// uses, so that both say the same of what the agent's user can run.
	sb := compose.Boundary(s.agentDoor(root, cfg))
	if cfgErr == nil {
		// What this machine lacks to run steps here (the agent's CLI, its key, the boundary) matters to gh
		// ralph advance only: for someone who uses the Action alone it is a warning, not a problem.
		for _, fd := range doctor.For(doctor.Machine, doctor.Agent(ctx, cfg, f.Environ(), sb, doctor.Here)) {
			if fd.Problem {
				const only = "needed for gh ralph advance on this machine; the Action checks its own runner before each step"
				fd.Problem, fd.Warn = false, true
				switch {
				case fd.Fix == "":
					fd.Fix = only
				case !strings.Contains(fd.Fix, "this machine"):
					fd.Fix += " (" + only + ")"
				}
			}
			findings = append(findings, fd)
		}
	}
	remote, err := doctor.Repository(ctx, s.gh, cfg, wf)
	if err != nil {
		return err // a token GitHub refuses: one line and gh's hint, exit 4 (see Exit)
	}
	findings = append(findings, remote...)
	findings = append(findings, s.rules(ctx, root, cfg)...)
	// The git transport, as a step's git reaches it: ralph's git runner, its environment and CA bundle, and
	// the token it pushes with.
	runner, closeRunner, err := compose.GitRunner(f.Environ())
	if err != nil {
		return err
	}
	findings = append(findings, doctor.For(doctor.Machine, []doctor.Finding{doctor.Remote(ctx, runner, root, git.Auth{Token: s.pushToken(ctx, root)})})...)
	closeRunner()
	// Each door's checks under its heading, so that someone who uses one door alone reads what is theirs. A
	// finding quotes what is in the checkout (a workflow file's name, a value of its YAML) and on GitHub: it
	// reaches the terminal inert, with ralph's own colour only.
	var byDoor []string
	for i, d := range doctor.Doors() {
		if i > 0 {
			fmt.Fprintln(f.Stdout)
		}
		fmt.Fprintln(f.Stdout, colorizer(f.Color).bold(d.Title()))
		k := 0
		for _, fd := range findings {
			if fd.Door != d {
				continue
			}
			fmt.Fprintln(f.Stdout, colorizer(f.Color).marked(inert.String(fd.String())))
			if fd.Problem {
				k++
			}
		}
		if k > 0 {
			byDoor = append(byDoor, fmt.Sprintf("%d for %s", k, d.Name()))
		}
	}
	problems := len(doctor.Problems(findings))
	warnings := 0
	for _, fd := range findings {
		if fd.Warn && !fd.Problem {
			warnings++
		}
	}
	if problems == 0 {
		fmt.Fprintf(f.Stderr, "ralph is ready in %s: add the ralph:build label to an issue (or gh ralph enroll N)\n", s.fullName())
		if warnings > 0 {
			fmt.Fprintf(f.Stderr, "%d warning%s (!) above: ralph runs, without what each one names\n", warnings, agent.Plural(warnings))
		}
		return nil
	}
	fmt.Fprintf(f.Stderr, "%d problem%s found in %s (%s); run gh ralph doctor again once fixed\n", problems, agent.Plural(problems), s.fullName(), strings.Join(byDoor, ", "))
	return &silentExit{code: ExitError}
}

// rules lists the repository rules that apply to ralph's branches and to the base, judged as a step here
// would meet them (with your git's signing).
func (s *session) rules(ctx context.Context, root string, cfg config.Config) []doctor.Finding {
	base := cfg.BaseBranch
	if base == "" {
		if repo, err := s.gh.Repository(ctx); err == nil {
			base = repo.DefaultBranch
		}
	}
	// An example issue's branch and documents (the date in their names is not what rules look at).
	rec := record.Record{Branch: cfg.BranchPrefix + "1-example", Date: "2026-01-01", Slug: "example"}
	sig := readSigning(ctx, root)
	fs := append(doctor.For(doctor.Machine, []doctor.Finding{sig.finding()}), doctor.Rules(ctx, s.gh, engine.RuleWork(cfg, sig.engine(), 1, "Example", rec), base)...)
	if docs, apart := engine.DocsRuleWork(cfg, sig.engine(), 1, "Example", rec); apart {
		// The documents branch is one of ralph's branches too, where its documents are judged.
		fs = append(fs, doctor.Rules(ctx, s.gh, docs, "")...)
	}
	return fs
}
