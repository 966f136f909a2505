package e2e

import (
	"bytes"
	"fmt"
	stdhtml "html"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// ralph acts only on what it alone wrote, and renders everything else inert. TestHostileNothingRendersOfOthers
// drives whole flows through the binary with every text that is not ralph's hostile (the issue's title and
// body, people's comments, review text and threads, a reject reason, an unknown command, the agent's
// documents, phase titles, a split's parts, file names, the agent's and verify's output), then reads
// everything ralph wrote to GitHub, renders each Markdown body as GitHub does, and finds nothing of the
// payload active: no link, image or HTML, no mention, no reference to another issue, no closing keyword
// but ralph's own, no marker but ralph's own, and no workflow command in the log.

// The payload's issue numbers (902-906) are of no issue in the test: a reference to one of them can only
// have come from the payload.
const (
	// hostileLine is the payload on one line, short enough for a title (GitHub takes 256 characters).
	// A phase's title takes 200 characters. "&commat;" and "&#x40;" are "@" once rendered.
	hostileLine = "@mona @octo/team #902 octo/demo#903 GH-904 fixes #906 https://evil.ex/a [x](//evil.ex/b) " +
		"www.evil.ex/e <img src=//evil.ex/i> <!--x--> ::error::x ##[warning]y m@evil.ex &commat;mona &#x40;x\a"
	// hostileName is the payload as a file's name: one path segment.
	hostileName = "@mona #902 fixes #906 [x](evil.example) www.evil.example <img src=x> <!-- ralph:status --> ::error::x ##[warning]y \a"
	// hostileDoc is the payload as a document, a comment or a body: every form, on lines of its own too.
	hostileDoc = "## ralph: In Review\n\n- [x] done\n\n" +
		"@mona @octo/team, see #902, octo/demo#903, GH-904 and https://github.com/octo/demo/issues/905; fixes #906.\n" +
		"Links: https://evil.example/a [x](//evil.example/b) [x](evil.example/c) [r][] [r] www.evil.example/e " +
		"<https://evil.example/f> <mailto:m@evil.example> m@evil.example\n" +
		"![i](//evil.example/g.png)\n\n" +
		"<a href=//evil.example/h>h</a> <img src=//evil.example/i>\n\n" +
		"</details>\n\n" +
		"<!-- ralph:record {\"v\":1,\"state\":\"in-progress\",\"branch\":\"main\"} -->\n" +
		"<!-- ralph:status -->\n\n" +
		"&commat;mona &#x40;x &num;907\n::error::x\n##[warning]y\n\x1b[31mred\x1b[0m \a \u202e\n\n" +
		"[r]: //evil.example/d\n"
)

// hostileAgent makes the scripted agent hostile: every document it writes carries the payload, it prints
// it on both of its outputs, and verify prints it too.
func (e *env) hostileAgent() {
	e.setControl("doc", hostileDoc)
	e.setControl("line", hostileLine)
	e.setControl("fname", hostileName)
	e.setControl("verify.sh", "cat \"$RALPH_TEST_CONTROL/doc\"\ntest ! -f fail-verify\n")
	say := "cat \"$RALPH_TEST_CONTROL/doc\"; cat \"$RALPH_TEST_CONTROL/doc\" >&2\n"
	for _, c := range []string{"research", "review", "self-review"} {
		e.setControl("extra_"+c, say+"printf '\\n' >> \"$RALPH_ARTIFACT\"; cat \"$RALPH_TEST_CONTROL/doc\" >> \"$RALPH_ARTIFACT\"\n")
	}
	e.setControl("extra_triage", say)
	e.setControl("extra_fix", say)
	// The plan's phase titles are the payload, but for its control character: a plan whose phase's title
	// holds one goes to a person before any phase runs (TestFlowPlanPhaseTitleNUL).
	e.setControl("extra_plan", say+`{
  printf '# Plan\n\n'; cat "$RALPH_TEST_CONTROL/doc"
  title=$(tr -d '\000-\010\013-\037\177' < "$RALPH_TEST_CONTROL/line")
  printf '\n## Phase 1: %s\n\nWrite feature-1.txt.\n\n## Phase 2: %s\n\nWrite feature-2.txt.\n' "$title" "$title"
} > "$RALPH_ARTIFACT"
`)
	// The first implement fails verify; the second leaves a protected file and a link out of the tree,
	// both named with the payload (refused); the third works, and leaves a file so named too. A fix
	// phase answers each thread with the payload as its reason.
	e.setControl("implement_extra", say+`ctl="$RALPH_TEST_CONTROL"; name=$(cat "$ctl/fname")
if [ "$RALPH_COMMAND" = fix ]; then
  printf 'Thread 1: not changed: %s\n' "$(cat "$ctl/line")" > "$RALPH_ARTIFACT"
  exit 0
fi
k=$(cat "$ctl/attempt" 2>/dev/null || echo 0); k=$((k + 1)); echo "$k" > "$ctl/attempt"
case "$k" in
1) echo x > fail-verify ;;
2) mkdir -p .github/workflows; echo x > ".github/workflows/$name.yml"; ln -s /etc/passwd "$name" ;;
*) echo x > "$name" ;;
esac
`)
}

// runs collects what each run of a flow printed.
type runs []result

func (rs *runs) add(r ...result) { *rs = append(*rs, r...) }

func (rs *runs) next(e *env) {
	e.t.Helper()
	r, ok := e.next()
	if !ok {
		e.t.Fatal("no run was dispatched")
	}
	rs.add(r)
}

func TestHostileNothingRendersOfOthers(t *testing.T) {
	t.Parallel()
	t.Run("flow", func(t *testing.T) {
		t.Parallel()
		cfg := func(review string) string {
			return strings.Replace(baseConfig(t, "review: "+review+"\nmax_failures: 5\n"),
				"verify:\n  - test -f README.md\n", "verify:\n  - sh \"$RALPH_TEST_CONTROL/verify.sh\"\n", 1)
		}
		e := newEnv(t, cfg("auto"))
		e.hostileAgent()
		e.srv.SetPermission("octocat", "read")
		var rs runs
		n := e.srv.CreateIssue("octocat", hostileLine, hostileDoc)
		e.srv.AddComment(n, "octocat", hostileDoc)
		e.srv.AddComment(n, maintainer, hostileDoc)
		// The critic sends the first plan back.
		e.setControl("verdict", "NEEDS_ITERATION")
		rs.add(e.label(n, maintainer)) // research
		rs.next(e)                     // plan
		rs.next(e)                     // review: sent back
		// A person reviews the next plans: one is rejected with a reason, the next approved.
		e.setConfig(cfg("interactive"))
		rs.next(e) // plan
		e.wantState(n, workflow.PlanInReview)
		rs.add(e.comment(n, "/ralph reject "+hostileDoc, maintainer))
		e.wantState(n, workflow.PlanInReview)
		rs.add(e.comment(n, "/ralph approve", maintainer))
		rs.add(e.chain(12)...)
		e.wantState(n, workflow.InReview)
		pulls := e.srv.Pulls()
		if len(pulls) != 1 {
			t.Fatalf("pull requests %+v, want one", pulls)
		}
		pr := pulls[0]
		// A review with a thread: a fix round, and ralph's reply on the thread.
		e.srv.AddReviewThread(pr.Number, "feature-1.txt", 1, "@@ -0,0 +1 @@\n+"+hostileLine,
			githubtest.ThreadComment{User: maintainer, Body: hostileDoc})
		e.srv.AddReview(pr.Number, maintainer, "CHANGES_REQUESTED", hostileDoc)
		rs.add(e.run("pull_request_review", e.reviewEvent(pr, maintainer, "OWNER", hostileDoc), nil))
		rs.add(e.chain(8)...)
		e.wantState(n, workflow.InReview)
		// An unknown command gets the help.
		rs.add(e.comment(n, "/ralph @mona#902[x](//evil.example/u)<!--ralph:status-->::error::x "+hostileLine, maintainer))
		if e.commentsStarting(n, "ralph does not know the command") != 1 {
			t.Errorf("no help for the unknown command")
		}
		if len(e.srv.ReviewComments(pr.Number)) < 2 {
			t.Errorf("ralph did not reply on the thread: %+v", e.srv.ReviewComments(pr.Number))
		}
		// The failures quote the output and the refused files' names.
		for _, want := range []string{"<summary>Last output</summary>", "protected_paths"} {
			found := false
			for _, c := range e.srv.Comments(n) {
				found = found || (c.User == e.srv.TokenLogin() && strings.Contains(c.Body, want))
			}
			if !found {
				t.Errorf("no comment of ralph's holds %q", want)
			}
		}
		e.nothingRendersOfOthers(rs, n)
	})
	t.Run("split", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, baseConfig(t, "triage: true\nresearch: false\nreview: skip\nself_review: false\n"))
		e.hostileAgent()
		e.setControl("phases", "1")
		// A part's section ends at the next "## " heading: its body's heading is one level down.
		part := strings.Replace(hostileDoc, "## ralph:", "### ralph:", 1)
		e.setControl("triage-1", "Too big: "+hostileDoc+"\nDECISION: split\n\n## Sub-issue: One "+hostileLine+"\n\n"+part+
			"\n## Sub-issue: Two "+hostileLine+"\n\n"+part+"\nBlocked by: 1\n")
		parent := e.srv.CreateIssue("octocat", hostileLine, hostileDoc)
		var rs runs
		rs.add(e.label(parent, maintainer))
		if kids := e.srv.SubIssues(parent); len(kids) != 2 {
			t.Fatalf("sub-issues %v, want 2", kids)
		}
		rs.add(e.chain(30)...)
		for _, k := range e.srv.SubIssues(parent) {
			if !strings.Contains(e.srv.Issue(k).Body, "evil.example") {
				t.Errorf("sub-issue #%d's body does not quote its part:\n%s", k, e.srv.Issue(k).Body)
			}
		}
		e.nothingRendersOfOthers(rs, parent)
	})
}

// nothingRendersOfOthers checks everything ralph wrote on the test server, and printed, in the flows of rs:
// the comments, pull requests, review replies and issues it wrote, the commits on its branches, the
// labels, each run's step summary and log.
func (e *env) nothingRendersOfOthers(rs runs, issue int) {
	e.t.Helper()
	// The issues and pull requests there are: a reference to one of them is ralph's own; the payload's
	// numbers are of none.
	last := issue
	for _, p := range e.srv.Pulls() {
		last = max(last, p.Number)
	}
	for _, k := range e.srv.SubIssues(issue) {
		last = max(last, k)
	}
	c := inertChecker{t: e.t, server: e.srv.ServerURL, last: last}
	bodies := 0
	for n := 1; n <= last; n++ {
		is := e.srv.Issue(n)
		self := n
		if is.IsPull {
			self = branchIssueOf(e, n)
		}
		if is.Author == e.srv.TokenLogin() && !is.IsPull { // a pull request's are below
			where := fmt.Sprintf("#%d's body", n)
			c.plain(where+" (title)", is.Title, 0)
			c.markdown(where, is.Body, self)
			bodies++
		}
		for _, cm := range e.srv.Comments(n) {
			if cm.User == e.srv.TokenLogin() {
				c.markdown(fmt.Sprintf("comment %d on #%d", cm.ID, n), cm.Body, self)
				bodies++
			}
		}
		if is.IsPull {
			for _, rc := range e.srv.ReviewComments(n) {
				if rc.User == e.srv.TokenLogin() {
					c.markdown(fmt.Sprintf("review reply %d on #%d", rc.ID, n), rc.Body, self)
					bodies++
				}
			}
		}
	}
	for _, p := range e.srv.Pulls() {
		c.plain(fmt.Sprintf("pull request #%d's title", p.Number), p.Title, 0)
		c.markdown(fmt.Sprintf("pull request #%d's body", p.Number), p.Body, branchIssueOf(e, p.Number))
		bodies++
	}
	for _, ref := range strings.Fields(e.git(e.srv.BareRepo, "for-each-ref", "--format=%(refname)", "refs/heads/ralph/")) {
		self, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(ref, "refs/heads/ralph/"), "-", 2)[0])
		for _, msg := range strings.Split(e.git(e.srv.BareRepo, "log", "--format=%B%x00", "refs/heads/main.."+ref), "\x00") {
			if msg = strings.TrimSpace(msg); msg != "" {
				c.plain("a commit on "+ref, msg, self)
				bodies++
			}
		}
	}
	for _, l := range e.srv.RepoLabels() {
		c.plain("label", l, 0)
	}
	for i, r := range rs {
		c.markdown(fmt.Sprintf("run %d's step summary", i+1), r.summary, 0)
		if m := regexp.MustCompile(`(?m)^[ \t]*(::|##\[).*`).FindAllString(r.summary, -1); len(m) > 0 {
			e.t.Errorf("run %d's step summary: lines that start as workflow commands: %q", i+1, m)
		}
		c.log(fmt.Sprintf("run %d's output", i+1), r.stdout)
		c.log(fmt.Sprintf("run %d's error output", i+1), r.stderr)
	}
	e.t.Logf("checked %d texts of ralph's, %d runs' summaries and logs", bodies, len(rs))
	if bodies < 10 {
		e.t.Errorf("only %d texts of ralph's were found to check", bodies)
	}
}

// branchIssueOf is the issue ralph's pull request n is for, from its branch's name.
func branchIssueOf(e *env, n int) int {
	for _, p := range e.srv.Pulls() {
		if p.Number == n {
			k, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(p.Head, "ralph/"), "-", 2)[0])
			return k
		}
	}
	return 0
}

// inertChecker finds, in what ralph wrote, anything of the payload GitHub would act on.
type inertChecker struct {
	t      testing.TB
	server string // ralph's own links lead here (the test server's web URL)
	last   int    // the highest issue or pull request number there is
}

var (
	// GitHub's mention: "@" after the start or a character that is not a word's or a backtick.
	mentionPattern = regexp.MustCompile("(^|[^\\w`])@[A-Za-z0-9]")
	// References to an issue: #N, owner/repo#N, GH-N, its URL.
	referencePattern = regexp.MustCompile(`(?i)(?:^|[^\w&/])(?:[\w.-]+/[\w.-]+)?#(\d+)|\bGH-(\d+)|https?://\S+/(?:issues|pull)/(\d+)`)
	closingPattern   = regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+(?:[\w.-]+/[\w.-]+)?#(\d+)`)
	// A link GitHub makes of bare text in a commit message or a title, and in a comment an e-mail address.
	bareLinkPattern = regexp.MustCompile(`(?i)\b(?:https?|ftp)://\S+|\bwww\.\S+`)
	emailPattern    = regexp.MustCompile(`[\w.+-]+@[\w-]+(\.[\w-]+)+`)
	// One of ralph's markers, where ralph puts them: at the very start and the very end of a body.
	leadingMarker = regexp.MustCompile(`^<!-- ralph:[^\n]*? -->\n`)
	// (The record spans lines; it holds no ">", which json.Marshal escapes.)
	trailingMarker = regexp.MustCompile(`\n<!-- ralph:[^>]*-->\n?$`)
	// ralph's own HTML: the tags of its details blocks (a document's, a failure's output), around code.
	ownHTML = regexp.MustCompile(`<details open>|</?details>|</?summary>`)
	attr    = regexp.MustCompile(`(?i)\b(href|src)="([^"]*)"`)
)

// references says what of s refers to an issue that is not there (the payload's numbers), and which
// closing keyword names another issue than self.
func (c inertChecker) references(s string, self int) []string {
	var bad []string
	for _, m := range referencePattern.FindAllStringSubmatch(s, -1) {
		for _, g := range m[1:] {
			if k, err := strconv.Atoi(g); err == nil && (k < 1 || k > c.last) {
				bad = append(bad, "reference "+strings.TrimSpace(m[0]))
			}
		}
	}
	for _, m := range closingPattern.FindAllStringSubmatch(s, -1) {
		if k, _ := strconv.Atoi(m[1]); k != self {
			bad = append(bad, "closing keyword "+m[0])
		}
	}
	if m := mentionPattern.FindString(s); m != "" {
		bad = append(bad, "mention "+m)
	}
	return bad
}

// plain checks text GitHub shows as it is but links (a title, a commit's message, a label).
func (c inertChecker) plain(where, s string, self int) {
	c.t.Helper()
	bad := c.references(s, self)
	bad = append(bad, bareLinks(s, bareLinkPattern)...)
	if strings.Contains(s, "<!--") {
		bad = append(bad, "an HTML comment")
	}
	if len(bad) > 0 {
		c.t.Errorf("%s: %q\n%s", where, bad, s)
	}
}

// markdown renders a body as GitHub does (GitHub-flavoured Markdown, HTML kept) and checks what renders
// outside code: its links and images lead only to ralph's server, its HTML is ralph's details block, its
// text holds no mention, reference or closing keyword of the payload's; and the body's only HTML comments
// are ralph's markers at its fixed start and end.
func (c inertChecker) markdown(where, body string, self int) {
	c.t.Helper()
	var bad []string
	rest := leadingMarker.ReplaceAllString(body, "")
	rest = trailingMarker.ReplaceAllString(rest, "")
	if strings.Contains(rest, "<!--") {
		bad = append(bad, "an HTML comment that is not ralph's marker")
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	src := []byte(body)
	doc := md.Parser().Parse(text.NewReader(src))
	var prose strings.Builder
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if n.Type() == ast.TypeBlock {
			prose.WriteString("\n")
		}
		switch n := n.(type) {
		case *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock:
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			prose.Write(n.Segment.Value(src))
			if n.SoftLineBreak() || n.HardLineBreak() {
				prose.WriteString("\n")
			}
		case *ast.String:
			prose.Write(n.Value)
		case *ast.Link:
			c.dest(&bad, "link", string(n.Destination))
		case *ast.Image:
			c.dest(&bad, "image", string(n.Destination))
		case *ast.AutoLink:
			c.dest(&bad, "autolink", string(n.URL(src)))
		case *ast.RawHTML:
			for i := 0; i < n.Segments.Len(); i++ {
				s := n.Segments.At(i)
				if h := strings.TrimSpace(string(s.Value(src))); strings.Contains(ownHTML.ReplaceAllString(h, ""), "<") && !leadingMarker.MatchString(h+"\n") {
					bad = append(bad, "HTML "+h)
				}
			}
		case *ast.HTMLBlock:
			for i := 0; i < n.Lines().Len(); i++ {
				l := n.Lines().At(i)
				if h := strings.TrimSpace(string(l.Value(src))); strings.Contains(ownHTML.ReplaceAllString(h, ""), "<") && !strings.HasPrefix(h, "<!-- ralph:") {
					bad = append(bad, "HTML "+h)
				}
			}
		}
		return ast.WalkContinue, nil
	})
	// Text as GitHub reads it for mentions, references and links: its character references resolved. Its
	// bare links are looked for in the text too: goldmark makes none after a "[" that opens no link, where
	// GitHub does.
	prosed := stdhtml.UnescapeString(prose.String())
	bad = append(bad, c.references(prosed, self)...)
	bad = append(bad, bareLinks(prosed, bareLinkPattern, emailPattern)...)
	var out bytes.Buffer
	if err := md.Renderer().Render(&out, src, doc); err != nil {
		c.t.Fatal(err)
	}
	for _, m := range attr.FindAllStringSubmatch(out.String(), -1) {
		if strings.Contains(m[2], "evil") {
			bad = append(bad, "rendered "+m[0])
		}
	}
	if strings.Count(out.String(), "<details") != strings.Count(out.String(), "</details>") {
		bad = append(bad, "a details block closed by text that is not ralph's")
	}
	if len(bad) > 0 {
		c.t.Errorf("%s: %q\n%s", where, bad, body)
	}
}

// bareLinks finds the payload's links in text GitHub autolinks.
func bareLinks(s string, patterns ...*regexp.Regexp) []string {
	var bad []string
	for _, p := range patterns {
		for _, m := range p.FindAllString(s, -1) {
			if strings.Contains(m, "evil") {
				bad = append(bad, "link "+m)
			}
		}
	}
	return bad
}

// dest checks a link's or image's destination: only ralph's links, to its server, are allowed.
func (c inertChecker) dest(bad *[]string, kind, d string) {
	if !strings.HasPrefix(d, c.server+"/") {
		*bad = append(*bad, kind+" to "+d)
	}
}

// log checks the lines ralph printed to the Actions log: outside the stretches where ralph stopped
// workflow commands (the agent's and verify's output), no line is a command but ralph's own.
func (c inertChecker) log(where, s string) {
	c.t.Helper()
	var bad []string
	stopped := ""
	for _, l := range strings.Split(s, "\n") {
		rest := strings.TrimLeft(l, " \t")
		if stopped != "" {
			if rest == "::"+stopped+"::" {
				stopped = ""
			}
			continue
		}
		if tok, ok := strings.CutPrefix(rest, "::stop-commands::"); ok {
			stopped = tok
			continue
		}
		// The runner reads a line as a "::name::" command first, and only a line that is none for its
		// "##[name]" anywhere: in ralph's own annotation, "##[" is the message's text.
		if ownCommand.MatchString(rest) {
			continue
		}
		if strings.HasPrefix(rest, "::") || strings.Contains(l, "##[") {
			bad = append(bad, l)
		}
	}
	if len(bad) > 0 {
		c.t.Errorf("%s: workflow commands that are not ralph's: %q", where, bad)
	}
}

// ownCommand is a workflow command ralph prints itself.
var ownCommand = regexp.MustCompile(`^::(group|endgroup|add-mask|warning|error|notice|debug)( [^:]*)?::`)
