package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/workflow"
)

// billingModel is a vendor API that answers as the real one does when asked for what ralph's gateway
// cannot meter by tokens alone: an OpenAI background request gets a queued response with no usage (its
// usage comes later, to whoever fetches the response), and an Anthropic request with the web search tool
// gets an answer that ran searches, billed per search on top of a few tokens. It counts what it was sent.
type billingModel struct {
	*httptest.Server
	mu       sync.Mutex
	requests int
	bodies   []string
}

func newBillingModel(t *testing.T, key string) *billingModel {
	t.Helper()
	m := &billingModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Api-Key") != key && r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error":"not ralph's key"}`, http.StatusUnauthorized)
			return
		}
		m.mu.Lock()
		m.requests++
		m.bodies = append(m.bodies, string(body))
		m.mu.Unlock()
		var req struct {
			Model      string `json:"model"`
			Background bool   `json:"background"`
		}
		_ = json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/responses":
			if req.Background {
				fmt.Fprintf(w, `{"id":"resp_%d","object":"response","model":%q,"status":"queued","background":true,"output":[],"usage":null}`, m.count(), req.Model)
				return
			}
			fmt.Fprintf(w, `{"id":"resp_%d","object":"response","model":%q,"status":"completed","output":[],"usage":{"input_tokens":20,"output_tokens":10}}`, m.count(), req.Model)
		case "/v1/messages":
			fmt.Fprintf(w, `{"id":"msg_%d","type":"message","model":%q,"content":[{"type":"text","text":"found"}],"usage":{"input_tokens":20,"output_tokens":10,"server_tool_use":{"web_search_requests":10}}}`, m.count(), req.Model)
		default:
			http.Error(w, `{"error":"not scripted"}`, http.StatusNotFound)
		}
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *billingModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests
}

// hostileModelEnv is a repository whose command agent reaches vendor's API through ralph's gateway, with
// the billing model behind it; extra is more of the config.
func hostileModelEnv(t *testing.T, as runAs, vendor, keyName, extraAgent, extra string) (*env, *billingModel) {
	t.Helper()
	const key = "sk-ralphs-own-model-key-0123456789"
	model := newBillingModel(t, key)
	e := newEnvAs(t, as, "agent:\n  preset: command\n  command: "+agentCommand(t)+"\n  timeout: 2m\n"+extraAgent+
		"  env:\n    RALPH_TEST_CONTROL: \"\"\n    RALPH_TEST_MODELCALL: "+yamlQuote(modelcall)+"\n    "+keyName+": \"\"\n"+
		"verify:\n  - test -f README.md\n"+
		"gateway:\n  vendor: "+vendor+"\n  upstream: "+model.URL+"\n"+extra)
	e.extra = map[string]string{keyName: key}
	return e, model
}

// hammer is the hostile agent's script: the same model request, n times, whatever the answers.
func hammer(path, body string, n int) string {
	return fmt.Sprintf(`i=0
while [ $i -lt %d ]; do
  "$RALPH_TEST_MODELCALL" post %s '%s' || true
  i=$((i+1))
done
`, n, path, body)
}

// OpenAI's background mode answers at once with no usage, and bills the work later: 20 such requests under
// a budget of 1,000 tokens would be metered as nothing. The gateway refuses them: none reaches the model,
// the agent is told why, and the log says what was refused.
func TestHostileGatewayBackground(t *testing.T) {
	bothUsers(t, testHostileGatewayBackground)
}

func testHostileGatewayBackground(t *testing.T, as runAs) {
	e, model := hostileModelEnv(t, as, "openai", "OPENAI_API_KEY", "  max_tokens: 1000\n", "")
	e.setControl("extra_research", hammer("/v1/responses", `{"model":"gpt-5","input":"Think for an hour.","background":true}`, 20))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	r := e.label(n, maintainer)
	if got := model.count(); got != 0 {
		t.Errorf("%d background requests reached the model, want none", got)
	}
	if !strings.Contains(r.stdout, "modelcall: 400 ") || !strings.Contains(r.stdout, "background mode answers later, with no usage ralph can meter") {
		t.Errorf("the agent was not told why:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "refused POST /v1/responses: background mode answers later") {
		t.Errorf("the log does not say what the gateway refused:\n%s", r.stdout)
	}
	if u := e.record(n).Usage; u != nil && u.Requests != 0 {
		t.Errorf("recorded usage %+v, want no model request", u)
	}
}

// Anthropic's web search bills $10 per 1,000 searches on top of the tokens: an agent that searches without
// end under agent.max_cost spends in searches what the tokens do not show. By default the gateway refuses
// the tool; allowed, it prices each search the answer reports, and the budget stops the agent.
func TestHostileGatewayWebSearch(t *testing.T) {
	bothUsers(t, testHostileGatewayWebSearch)
}

func testHostileGatewayWebSearch(t *testing.T, as runAs) {
	search := `{"model":"claude-haiku-4-5","max_tokens":64,"messages":[{"role":"user","content":"Search the web."}],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`

	t.Run("refused by default", func(t *testing.T) {
		t.Parallel()
		e, model := hostileModelEnv(t, as, "anthropic", "ANTHROPIC_API_KEY", "  max_cost: 0.05\n", "")
		e.setControl("extra_research", hammer("/v1/messages", search, 20))
		n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
		r := e.label(n, maintainer)
		if got := model.count(); got != 0 {
			t.Errorf("%d web search requests reached the model, want none", got)
		}
		if !strings.Contains(r.stdout, "modelcall: 400 ") || !strings.Contains(r.stdout, "gateway.server_tools") {
			t.Errorf("the agent was not told why, nor what to set:\n%s", r.stdout)
		}
	})

	t.Run("allowed and priced", func(t *testing.T) {
		t.Parallel()
		e, model := hostileModelEnv(t, as, "anthropic", "ANTHROPIC_API_KEY", "  max_cost: 0.05\n", "  server_tools: [web_search]\n")
		e.setControl("extra_research", hammer("/v1/messages", search, 20))
		n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
		r := e.label(n, maintainer)
		// The first answer's 10 searches cost $0.10: the budget is reached, and every later request refused.
		if got := model.count(); got != 1 {
			t.Errorf("the model answered %d requests, want 1 (then the budget)", got)
		}
		if r.exit != 0 || r.outputs["state"] != "human-needed" {
			t.Fatalf("research at the budget: exit %d outputs %v\n%s%s", r.exit, r.outputs, r.stdout, r.stderr)
		}
		e.wantState(n, workflow.HumanNeeded)
		rec := e.record(n)
		if rec.Last == nil || rec.Last.Outcome != "budget reached" || rec.Usage == nil || rec.Usage.CostUSD < 0.1 || rec.Usage.Requests != 1 {
			t.Errorf("the record: last %+v, usage %+v; want budget reached after one request of at least $0.10", rec.Last, rec.Usage)
		}
		if !strings.Contains(r.stdout, "ralph: budget reached, no more model requests in this step: agent.max_cost is $0.05") {
			t.Errorf("the agent was not told the budget is reached:\n%s", r.stdout)
		}
	})
}

// A request member, a header or a beta feature the gateway does not know may change what the vendor bills
// (server-side compaction summarizes past max_tokens, a million-token context bills above the list
// prices): the gateway refuses each, naming it, and none reaches the model; a beta gateway.betas names
// passes.
func TestHostileGatewayUnknownMembersHeadersBetas(t *testing.T) {
	bothUsers(t, testHostileGatewayUnknownMembersHeadersBetas)
}

func testHostileGatewayUnknownMembersHeadersBetas(t *testing.T, as runAs) {
	e, model := hostileModelEnv(t, as, "anthropic", "ANTHROPIC_API_KEY", "", "  betas: [context-1m-2025-08-07, compact-2026-01-12]\n")
	msg := func(extra string) string {
		return `{"model":"claude-haiku-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]` + extra + `}`
	}
	call := func(body string, headers ...string) string {
		return `"$RALPH_TEST_MODELCALL" post /v1/messages '` + body + `' ` + strings.Join(headers, " ") + " || true\n"
	}
	e.setControl("extra_research",
		call(msg(`,"context_management":{"edits":[{"type":"compact_20260112"}]}`), "'Anthropic-Beta: compact-2026-01-12'")+
			call(msg(`,"inference_geo":"us"`))+
			call(msg(""), "'Anthropic-Beta: interleaved-thinking-2025-05-14,fast-mode-2026-02-01'")+
			call(msg(""), "'X-Frobnicate: 1'")+
			call(msg(""), "'Anthropic-Beta: context-1m-2025-08-07'"))
	n := e.srv.CreateIssue("octocat", "Add a greeting", "Please greet people.")
	r := e.label(n, maintainer)
	if got := model.count(); got != 1 {
		t.Errorf("%d requests reached the model, want 1 (the beta gateway.betas names)", got)
	}
	for _, want := range []string{
		`context_management compaction (\"compact_20260112\") runs summarizing passes beyond the request's max_tokens`,
		`the beta feature \"fast-mode-2026-02-01\" (anthropic-beta) is not one ralph knows how to meter; to forward it, list it in ` + "`gateway.betas`",
		`the member \"inference_geo\" is not one ralph forwards in an Anthropic Messages request`,
		`the header \"X-Frobnicate\" is not one ralph forwards`,
		`refused POST /v1/messages: the header "X-Frobnicate"`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("neither the agent nor the log says %s:\n%s", want, r.stdout)
		}
	}
}
