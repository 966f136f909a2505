package action

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/inert"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Own is a verb of the Action's own, one that never reaches the engine; every other verb is the
// engine's request kind (engine.Action), which the Action only passes on.
type Own string

const (
	OwnSweep Own = "sweep" // advance every issue that is ready (a schedule, the command input)
	OwnHelp  Own = "help"  // an unknown /ralph command: reply with the commands
)

// inputVerb reads the command input (the action's, or a workflow_dispatch's): an engine request, or the
// Action's sweep.
func inputVerb(s string) (engine.Action, Own, error) {
	if s == string(OwnSweep) {
		return "", OwnSweep, nil
	}
	for _, a := range []engine.Action{engine.ActAdvance, engine.ActApprove, engine.ActReject, engine.ActRetry, engine.ActFix, engine.ActStatus, engine.ActFinish} {
		if s == string(a) {
			return a, "", nil
		}
	}
	return "", "", fmt.Errorf("command %q is not one of advance, sweep, approve, reject, retry, fix, status, finish", s)
}

// Trigger is an event reduced to what ralph does with it.
type Trigger struct {
	// Action is what the engine is asked for each issue ("" when Own is set, or nothing is to do).
	Action engine.Action
	// Own is a verb the Action does itself (a sweep, help); "" when the engine is asked.
	Own    Own
	Issues []int  // the issue (or, for a merged pull request, the issues it closes)
	Actor  string // the person whose action this is
	Reason string // reject's reason; for OwnHelp, the unknown command
	Why    string // why there is nothing to do, for the log
	// Pull is the closed pull request of engine.ActMerge.
	Pull engine.ClosedPull
	// Fix is what engine.ActFix knows of its cause. Reason is the person's text: the review's body, or what
	// follows `/ralph fix`; it is data, quoted, never read for commands.
	Fix *FixRequest
	// DefaultBranch is the repository's default branch, as the payload says ("" when it does not): where
	// a run started on a pull request's merge ref dispatches the next step (see runner.dispatch).
	DefaultBranch string
}

// The causes of a fix.
const (
	// The engine's causes, which fixIssue hands over as they are.
	FixReview  = engine.FixReview  // a review that requests changes
	FixComment = engine.FixComment // `/ralph fix [text]` on the issue or its pull request (or the command input)
	FixCI      = engine.FixCI      // checks that failed on the head commit of ralph's pull request
)

// FixRequest is a fix trigger's cause as the event states it. None of it is trusted: the engine acts only
// if the pull request, branch and commit are those its record says ralph opened and pushed, and, for a
// review or a comment, only if the Actor has write access.
type FixRequest struct {
	Cause string // FixReview, FixComment or FixCI
	// Pull is the pull request the event is about; 0 when it names none (`/ralph fix` on the issue).
	Pull int
	// Head is the pull request's head branch in this repository; "" when the event does not say (a
	// comment on a pull request: the runner reads it, see resolveFixPull).
	Head string
	// HeadSHA is the commit whose checks failed (FixCI).
	HeadSHA string
	// ReviewID is the review that requested changes (FixReview).
	ReviewID int64
	// CheckSuiteID or WorkflowRunID is what failed (FixCI).
	CheckSuiteID, WorkflowRunID int64
}

// event holds the fields of the payloads ralph reads.
type event struct {
	Action string `json:"action"`
	Label  *struct {
		Name string `json:"name"`
	} `json:"label"`
	Issue *struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Comment *struct {
		Body string `json:"body"`
		User struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
	} `json:"comment"`
	PullRequest *struct {
		Number int    `json:"number"`
		Body   string `json:"body"`
		Merged bool   `json:"merged"`
		Head   struct {
			Ref  string `json:"ref"`
			Repo *struct {
				Fork     bool   `json:"fork"`
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"base"`
	} `json:"pull_request"`
	Inputs map[string]any `json:"inputs"`
	Sender *struct {
		Login string `json:"login"`
	} `json:"sender"`
	Review *struct {
		ID                int64  `json:"id"`
		State             string `json:"state"`
		Body              string `json:"body"`
		AuthorAssociation string `json:"author_association"`
		User              struct {
			Login string `json:"login"`
		} `json:"user"`
	} `json:"review"`
	CheckSuite *struct {
		ID           int64      `json:"id"`
		HeadBranch   string     `json:"head_branch"`
		HeadSHA      string     `json:"head_sha"`
		Conclusion   string     `json:"conclusion"`
		PullRequests []prOfRuns `json:"pull_requests"`
	} `json:"check_suite"`
	WorkflowRun *struct {
		ID             int64      `json:"id"`
		HeadBranch     string     `json:"head_branch"`
		HeadSHA        string     `json:"head_sha"`
		Conclusion     string     `json:"conclusion"`
		Event          string     `json:"event"`
		PullRequests   []prOfRuns `json:"pull_requests"`
		HeadRepository *struct {
			FullName string `json:"full_name"`
		} `json:"head_repository"`
	} `json:"workflow_run"`
	Repository *struct {
		ID            int64  `json:"id"`
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
}

// prOfRuns is a pull request as a check suite or workflow run lists it: GitHub lists only pull requests
// whose head branch is in this repository (none for a fork's).
type prOfRuns struct {
	Number int `json:"number"`
	Head   struct {
		Ref  string `json:"ref"`
		Repo *struct {
			ID int64 `json:"id"`
		} `json:"repo"`
	} `json:"head"`
}

// ParseEvent turns an event name and payload into a Trigger. branchPrefix recognizes ralph's branches in a
// pull request event.
func ParseEvent(name string, payload []byte, branchPrefix string) (Trigger, error) {
	var ev event
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, &ev); err != nil {
			return Trigger{}, fmt.Errorf("reading the %s event payload: %w", name, err)
		}
	}
	t, err := eventTrigger(name, ev, branchPrefix)
	if ev.Repository != nil {
		t.DefaultBranch = ev.Repository.DefaultBranch
	}
	return t, err
}

func eventTrigger(name string, ev event, branchPrefix string) (Trigger, error) {
	sender := ""
	if ev.Sender != nil {
		sender = ev.Sender.Login
	}
	switch name {
	case "issues":
		if ev.Issue == nil {
			return Trigger{}, fmt.Errorf("the issues event has no issue")
		}
		if ev.Action != "labeled" || ev.Label == nil || ev.Label.Name != workflow.LabelBuild {
			return Trigger{Why: fmt.Sprintf("issues event %q is not %s being added", ev.Action, workflow.LabelBuild)}, nil
		}
		return Trigger{Action: engine.ActEnroll, Issues: []int{ev.Issue.Number}, Actor: sender}, nil

	case "issue_comment":
		if ev.Issue == nil || ev.Comment == nil {
			return Trigger{}, fmt.Errorf("the issue_comment event has no issue or comment")
		}
		if ev.Action != "created" {
			return Trigger{Why: fmt.Sprintf("issue_comment %q: only new comments carry commands", ev.Action)}, nil
		}
		t, ok := ParseComment(ev.Comment.Body)
		if !ok {
			return Trigger{Why: "the comment is not a /ralph command"}, nil
		}
		t.Actor = ev.Comment.User.Login
		onPull := len(ev.Issue.PullRequest) > 0 && string(ev.Issue.PullRequest) != "null"
		if t.Action == engine.ActFix {
			t.Fix = &FixRequest{Cause: FixComment}
			if onPull {
				// The payload does not say the pull request's branch: the runner reads it (resolveFixPull),
				// and the engine checks it is ralph's.
				t.Fix.Pull = ev.Issue.Number
			} else {
				t.Issues = []int{ev.Issue.Number}
			}
			return t, nil
		}
		if onPull {
			return Trigger{Why: "/ralph commands work on issues, not pull requests (except /ralph fix)"}, nil
		}
		t.Issues = []int{ev.Issue.Number}
		return t, nil

	case "pull_request_review":
		return reviewTrigger(ev, branchPrefix)

	case "check_suite", "workflow_run":
		return checksTrigger(name, ev, branchPrefix)

	case "workflow_dispatch":
		n, err := inputInt(ev.Inputs["issue"])
		if err != nil {
			return Trigger{}, fmt.Errorf("workflow_dispatch input issue: %w", err)
		}
		t := Trigger{Action: engine.ActAdvance, Actor: sender}
		if c, _ := ev.Inputs["command"].(string); c != "" {
			if t.Action, t.Own, err = inputVerb(c); err != nil {
				return Trigger{}, fmt.Errorf("workflow_dispatch input %w", err)
			}
		}
		if n > 0 {
			t.Issues = []int{n}
		}
		if r, _ := ev.Inputs["reason"].(string); r != "" {
			t.Reason = r
		}
		return t, nil

	case "schedule":
		return Trigger{Own: OwnSweep}, nil

	case "pull_request":
		if ev.PullRequest == nil {
			return Trigger{}, fmt.Errorf("the pull_request event has no pull request")
		}
		if ev.Action != "closed" {
			return Trigger{Why: fmt.Sprintf("pull_request %q: only a closed pull request moves an issue", ev.Action)}, nil
		}
		// Only ralph's own pull request moves an issue: the one it opened from the issue's branch, in this
		// repository. Its body counts for nothing ("Closes #N" is anyone's to write); the engine checks the
		// branch and the number against the issue's record.
		pr := ev.PullRequest
		n, why := ralphPull(ev, branchPrefix)
		if why != "" {
			return Trigger{Why: why}, nil
		}
		return Trigger{Action: engine.ActMerge, Issues: []int{n}, Actor: sender, Pull: engine.ClosedPull{Number: pr.Number, Head: pr.Head.Ref, SameRepo: true}}, nil

	case "pull_request_target":
		return Trigger{Why: "ralph never acts on pull_request_target events: they run with secrets on code from forks"}, nil
	}
	return Trigger{Why: fmt.Sprintf("ralph has nothing to do for %q events", name)}, nil
}

// ralphPull reads the issue of the event's pull request when it is ralph's: from a branch under
// branchPrefix in this repository. Its title and body count for nothing ("Closes #N" is anyone's to write);
// the engine checks the branch and the number against the issue's record. why says why it is not.
func ralphPull(ev event, branchPrefix string) (n int, why string) {
	pr := ev.PullRequest
	fork := pr.Head.Repo == nil || pr.Head.Repo.Fork || (pr.Base.Repo != nil && pr.Head.Repo.FullName != pr.Base.Repo.FullName)
	if fork {
		return 0, fmt.Sprintf("pull request #%d comes from another repository; ralph's come from its own branches", pr.Number)
	}
	if n = branchIssue(pr.Head.Ref, branchPrefix); n == 0 {
		return 0, fmt.Sprintf("pull request #%d is not from a ralph branch (%sN-…)", pr.Number, branchPrefix)
	}
	return n, ""
}

// outsiders are the author associations GitHub gives only to people without write access to the
// repository; OWNER, MEMBER and COLLABORATOR may or may not have it, which the engine checks.
var outsiders = map[string]bool{"NONE": true, "CONTRIBUTOR": true, "FIRST_TIMER": true, "FIRST_TIME_CONTRIBUTOR": true, "MANNEQUIN": true}

// reviewTrigger: a submitted review that requests changes on ralph's pull request asks for a fix, with the
// reviewer as the actor (whose write access the engine checks) and the review's body as data. A review by
// someone GitHub itself says is an outsider is ignored here, without a run's worth of API calls.
func reviewTrigger(ev event, branchPrefix string) (Trigger, error) {
	if ev.PullRequest == nil || ev.Review == nil {
		return Trigger{}, fmt.Errorf("the pull_request_review event has no pull request or review")
	}
	rv := ev.Review
	if ev.Action != "submitted" || rv.State != "changes_requested" {
		return Trigger{Why: fmt.Sprintf("pull_request_review %q with state %q: only a review that requests changes asks for a fix", ev.Action, rv.State)}, nil
	}
	n, why := ralphPull(ev, branchPrefix)
	if why != "" {
		return Trigger{Why: why}, nil
	}
	if outsiders[rv.AuthorAssociation] {
		return Trigger{Why: fmt.Sprintf("the review by @%s (%s) cannot be from someone with write access: ignored", rv.User.Login, rv.AuthorAssociation)}, nil
	}
	return Trigger{Action: engine.ActFix, Issues: []int{n}, Actor: rv.User.Login, Reason: rv.Body,
		Fix: &FixRequest{Cause: FixReview, Pull: ev.PullRequest.Number, Head: ev.PullRequest.Head.Ref, ReviewID: rv.ID}}, nil
}

// checksTrigger: a check suite or workflow run that completed with a failure on a ralph branch of this
// repository asks for a fix of the issue the branch is for. Names, titles and commit messages in the
// payload count for nothing; the engine checks that the commit is the one ralph pushed last.
func checksTrigger(name string, ev event, branchPrefix string) (Trigger, error) {
	var (
		branch, sha, conclusion string
		prs                     []prOfRuns
		fix                     = &FixRequest{Cause: FixCI}
	)
	switch name {
	case "check_suite":
		cs := ev.CheckSuite
		if cs == nil {
			return Trigger{}, fmt.Errorf("the check_suite event has no check suite")
		}
		branch, sha, conclusion, prs, fix.CheckSuiteID = cs.HeadBranch, cs.HeadSHA, cs.Conclusion, cs.PullRequests, cs.ID
	default:
		wr := ev.WorkflowRun
		if wr == nil {
			return Trigger{}, fmt.Errorf("the workflow_run event has no workflow run")
		}
		branch, sha, conclusion, prs, fix.WorkflowRunID = wr.HeadBranch, wr.HeadSHA, wr.Conclusion, wr.PullRequests, wr.ID
	}
	if ev.Action != "completed" || (conclusion != "failure" && conclusion != "timed_out") {
		return Trigger{Why: fmt.Sprintf("%s %q with conclusion %q: only failed checks ask for a fix", name, ev.Action, conclusion)}, nil
	}
	n := branchIssue(branch, branchPrefix)
	if n == 0 {
		return Trigger{Why: fmt.Sprintf("the failed checks are on branch %q, not a ralph branch (%sN-…)", branch, branchPrefix)}, nil
	}
	if wr := ev.WorkflowRun; wr != nil {
		// A fork's run names a branch of the fork, which may be named like ralph's.
		if wr.HeadRepository == nil || ev.Repository == nil || wr.HeadRepository.FullName != ev.Repository.FullName {
			other := ""
			if wr.HeadRepository != nil {
				other = wr.HeadRepository.FullName
			}
			return Trigger{Why: fmt.Sprintf("the failed run on %q comes from another repository (%s)", branch, other)}, nil
		}
		// Only the repository's CI, not a run ralph's own workflow_dispatch (or a schedule) started.
		if wr.Event != "push" && wr.Event != "pull_request" {
			return Trigger{Why: fmt.Sprintf("the failed run was started by %q; only runs started by push or pull_request ask for a fix", wr.Event)}, nil
		}
	}
	for _, pr := range prs {
		sameRepo := pr.Head.Repo == nil || ev.Repository == nil || pr.Head.Repo.ID == ev.Repository.ID
		if pr.Head.Ref == branch && sameRepo {
			fix.Pull = pr.Number
		}
	}
	if name == "check_suite" && fix.Pull == 0 {
		// GitHub lists no pull request for a fork's suite; a suite of a push before ralph's pull request
		// opened has nothing to fix either.
		return Trigger{Why: fmt.Sprintf("the failed checks on %q belong to no pull request from this repository's own branch", branch)}, nil
	}
	fix.Head, fix.HeadSHA = branch, sha
	actor := ""
	if ev.Sender != nil {
		actor = ev.Sender.Login
	}
	return Trigger{Action: engine.ActFix, Issues: []int{n}, Actor: actor, Fix: fix}, nil
}

func inputInt(v any) (int, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case float64:
		return int(x), nil
	case string:
		x = strings.TrimPrefix(strings.TrimSpace(x), "#")
		if x == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(x)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not an issue number", x)
		}
		return n, nil
	}
	return 0, fmt.Errorf("%v is not an issue number", v)
}

// ParseComment reads a `/ralph <command> [args]` comment (the first line counts): the engine's request
// with its argument in Reason (reject's reason, fix's text), or OwnHelp with the unknown word in Reason.
func ParseComment(body string) (Trigger, bool) {
	line, rest, _ := strings.Cut(strings.TrimLeft(body, " \t\r\n"), "\n")
	line = strings.TrimSpace(line)
	if line != "/ralph" && !strings.HasPrefix(line, "/ralph ") {
		return Trigger{}, false
	}
	fields := strings.Fields(strings.TrimPrefix(line, "/ralph"))
	if len(fields) == 0 {
		return Trigger{Own: OwnHelp}, true
	}
	arg := strings.TrimSpace(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(line, "/ralph")), fields[0])) + "\n" + rest)
	word := strings.ToLower(fields[0])
	for _, a := range []engine.Action{engine.ActApprove, engine.ActRetry, engine.ActStatus} {
		if word == string(a) {
			return Trigger{Action: a}, true
		}
	}
	for _, a := range []engine.Action{engine.ActReject, engine.ActFix} {
		if word == string(a) {
			return Trigger{Action: a, Reason: arg}, true
		}
	}
	return Trigger{Own: OwnHelp, Reason: fields[0]}, true
}

// branchIssue reads N from a ralph branch name "<prefix>N-slug".
func branchIssue(ref, prefix string) int {
	if prefix == "" || !strings.HasPrefix(ref, prefix) {
		return 0
	}
	num, _, _ := strings.Cut(strings.TrimPrefix(ref, prefix), "-")
	n, err := strconv.Atoi(num)
	if err != nil {
		return 0
	}
	return n
}

// HelpText answers an unknown /ralph command.
func HelpText(unknown string) string {
	var b strings.Builder
	if unknown != "" {
		// The command is whatever its commenter wrote: quoted inert, it can mention or reference nothing.
		fmt.Fprintf(&b, "ralph does not know the command `%s`.", inert.CodeText(unknown))
	} else {
		b.WriteString("ralph needs a command after `/ralph`.")
	}
	b.WriteString(" These are the commands it understands, one per comment:\n\n" +
		"- `/ralph approve` — approve the plan (Plan in Review, `review: interactive`)\n" +
		"- `/ralph reject <why>` — send the plan back; the reason goes to the next plan\n" +
		"- `/ralph retry` — take the issue out of Human Needed, back where it was\n" +
		"- `/ralph fix [what to change]` — on the issue or its pull request (In Review): ralph works on the unresolved review threads, and your text, on the same pull request\n" +
		"- `/ralph status` — refresh the status comment\n\n" +
		"To start ralph on an issue, add the `" + workflow.LabelBuild + "` label.")
	return b.String()
}
