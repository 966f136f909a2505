package action

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// Command is what a run is asked to do.
type Command string

// The commands of the action's `command` input.
const (
	CmdAdvance Command = "advance"
	CmdSweep   Command = "sweep"
	CmdApprove Command = "approve"
	CmdReject  Command = "reject"
	CmdRetry   Command = "retry"
	CmdStatus  Command = "status"
	CmdEnroll  Command = "enroll" // from an `issues` labeled event
	CmdMerge   Command = "merge"  // from a `pull_request` closed event
	CmdHelp    Command = "help"   // an unknown /ralph command: reply with help
	CmdNone    Command = ""       // nothing to do
)

// Trigger is an event reduced to what ralph does with it.
type Trigger struct {
	Command Command
	Issues  []int  // the issue (or, for a merged pull request, the issues it closes)
	Actor   string // the person whose action this is
	Reason  string // reject's reason; for CmdHelp, the unknown command
	Why     string // why there is nothing to do, for the log
	// Pull is the closed pull request of CmdMerge.
	Pull engine.ClosedPull
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
		return Trigger{Command: CmdEnroll, Issues: []int{ev.Issue.Number}, Actor: sender}, nil

	case "issue_comment":
		if ev.Issue == nil || ev.Comment == nil {
			return Trigger{}, fmt.Errorf("the issue_comment event has no issue or comment")
		}
		if ev.Action != "created" {
			return Trigger{Why: fmt.Sprintf("issue_comment %q: only new comments carry commands", ev.Action)}, nil
		}
		cmd, arg, ok := ParseComment(ev.Comment.Body)
		if !ok {
			return Trigger{Why: "the comment is not a /ralph command"}, nil
		}
		if len(ev.Issue.PullRequest) > 0 && string(ev.Issue.PullRequest) != "null" {
			return Trigger{Why: "/ralph commands work on issues, not pull requests"}, nil
		}
		t := Trigger{Command: cmd, Issues: []int{ev.Issue.Number}, Actor: ev.Comment.User.Login, Reason: arg}
		return t, nil

	case "workflow_dispatch":
		n, err := inputInt(ev.Inputs["issue"])
		if err != nil {
			return Trigger{}, fmt.Errorf("workflow_dispatch input issue: %w", err)
		}
		cmd := CmdAdvance
		if c, _ := ev.Inputs["command"].(string); c != "" {
			cmd = Command(c)
		}
		t := Trigger{Command: cmd, Actor: sender}
		if n > 0 {
			t.Issues = []int{n}
		}
		if r, _ := ev.Inputs["reason"].(string); r != "" {
			t.Reason = r
		}
		return t, nil

	case "schedule":
		return Trigger{Command: CmdSweep}, nil

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
		fork := pr.Head.Repo == nil || pr.Head.Repo.Fork || (pr.Base.Repo != nil && pr.Head.Repo.FullName != pr.Base.Repo.FullName)
		if fork {
			return Trigger{Why: fmt.Sprintf("pull request #%d comes from another repository; ralph's come from its own branches", pr.Number)}, nil
		}
		n := branchIssue(pr.Head.Ref, branchPrefix)
		if n == 0 {
			return Trigger{Why: fmt.Sprintf("pull request #%d is not from a ralph branch (%sN-…)", pr.Number, branchPrefix)}, nil
		}
		return Trigger{Command: CmdMerge, Issues: []int{n}, Actor: sender, Pull: engine.ClosedPull{Number: pr.Number, Head: pr.Head.Ref, SameRepo: true}}, nil

	case "pull_request_target":
		return Trigger{Why: "ralph never acts on pull_request_target events: they run with secrets on code from forks"}, nil
	}
	return Trigger{Why: fmt.Sprintf("ralph has nothing to do for %q events", name)}, nil
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

// ParseComment reads a `/ralph <command> [args]` comment (the first line counts).
func ParseComment(body string) (Command, string, bool) {
	line, rest, _ := strings.Cut(strings.TrimLeft(body, " \t\r\n"), "\n")
	line = strings.TrimSpace(line)
	if line != "/ralph" && !strings.HasPrefix(line, "/ralph ") {
		return CmdNone, "", false
	}
	fields := strings.Fields(strings.TrimPrefix(line, "/ralph"))
	if len(fields) == 0 {
		return CmdHelp, "", true
	}
	arg := strings.TrimSpace(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(line, "/ralph")), fields[0])) + "\n" + rest)
	switch c := Command(strings.ToLower(fields[0])); c {
	case CmdApprove, CmdRetry, CmdStatus:
		return c, "", true
	case CmdReject:
		return c, arg, true
	}
	return CmdHelp, fields[0], true
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
		fmt.Fprintf(&b, "ralph does not know the command `%s`.", strings.ReplaceAll(engine.Inert(unknown), "`", "'"))
	} else {
		b.WriteString("ralph needs a command after `/ralph`.")
	}
	b.WriteString(" These are the commands it understands, one per comment:\n\n" +
		"- `/ralph approve` — approve the plan (Plan in Review, `review: interactive`)\n" +
		"- `/ralph reject <why>` — send the plan back; the reason goes to the next plan\n" +
		"- `/ralph retry` — take the issue out of Human Needed, back where it was\n" +
		"- `/ralph status` — refresh the status comment\n\n" +
		"To start ralph on an issue, add the `" + workflow.LabelBuild + "` label.")
	return b.String()
}
