package agent

import (
	"fmt"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/gateway"
	"github.com/ralph-dev/gh-ralph/internal/preset"
)

// Gateway is how one run of the agent reaches ralph's model gateway.
type Gateway struct {
	Vendor gateway.Vendor
	URL    string // the gateway's base URL, in place of the vendor's
	Key    string // good for this run's gateway only
	// KeyName is the variable ralph holds the real key in (ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, …):
	// the agent gets the gateway's key under the same name, so that its CLI authenticates as it would with
	// the real one.
	KeyName string
	// ServerTools are the tools the vendor runs that the gateway forwards (gateway.server_tools): a CLI that
	// asks for one on every request by default is told not to, unless it is allowed.
	ServerTools []gateway.ServerTool
	// More are the other vendors the gateway serves for this run (a preset's that picks its vendor per
	// model, opencode), each at URL/<vendor>: their base-URL variables point there and their key
	// variables hold the gateway's key, like Vendor's.
	More []gateway.Vendor
	// presetEnv are the preset's own variables pointing it at the gateway (preset.Preset.GatewayEnv).
	presetEnv []string
}

// The variables every agent that runs with the gateway gets, whatever its vendor: a command agent may use
// them to reach its model through ralph.
const (
	EnvGatewayURL    = "RALPH_GATEWAY_URL"    // the vendor API's base URL, through ralph
	EnvGatewayKey    = "RALPH_GATEWAY_KEY"    // the key for that URL, good for this run
	EnvGatewayVendor = "RALPH_GATEWAY_VENDOR" // anthropic, openai or gemini
)

// env is the agent's environment with the gateway in place of the vendor: every variable that may hold a
// model key of the vendor, or point its clients elsewhere, is replaced; the agent gets the gateway's URL,
// and its key under the name the real key has (and the vendor's first key name, which SDKs read).
func (g *Gateway) env(base []string) []string {
	drop := map[string]bool{EnvGatewayURL: true, EnvGatewayKey: true, EnvGatewayVendor: true}
	for _, v := range append([]gateway.Vendor{g.Vendor}, g.More...) {
		for _, n := range v.CredentialNames() {
			drop[n] = true
		}
		pv, _ := preset.VendorOf(string(v))
		for _, b := range pv.BaseURLs {
			drop[b.Var] = true
		}
	}
	vendor, _ := preset.VendorOf(string(g.Vendor))
	for _, kv := range g.presetEnv {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	env := make([]string, 0, len(base)+8+len(g.presetEnv))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	env = append(env, EnvGatewayURL+"="+g.URL, EnvGatewayKey+"="+g.Key, EnvGatewayVendor+"="+string(g.Vendor))
	for _, b := range vendor.BaseURLs {
		env = append(env, b.Var+"="+g.URL+b.Suffix)
	}
	names := []string{g.Vendor.CredentialNames()[0]}
	if g.KeyName != "" && g.KeyName != names[0] {
		names = append(names, g.KeyName)
	}
	if g.KeyName == "CLAUDE_CODE_OAUTH_TOKEN" {
		// Claude Code prefers an API key to its OAuth token: give it only the token, as ralph holds only that.
		names = names[1:]
	}
	for _, n := range names {
		env = append(env, n+"="+g.Key)
	}
	for _, v := range g.More {
		pv, _ := preset.VendorOf(string(v))
		for _, b := range pv.BaseURLs {
			env = append(env, b.Var+"="+g.URL+"/"+string(v)+b.Suffix)
		}
		env = append(env, v.CredentialNames()[0]+"="+g.Key)
	}
	return append(env, g.presetEnv...)
}

// ModelCredential is the vendor's key as ralph holds it: the first of the vendor's key variables that
// agent.env sets to a value, or, named there with an empty value or not at all, that ralph's environment
// has. ok is false when there is none.
func ModelCredential(vendor gateway.Vendor, env []string, extra map[string]string) (gateway.Credential, bool) {
	have := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			have[k] = v
		}
	}
	for _, name := range vendor.CredentialNames() {
		v := extra[name]
		if v == "" {
			v = have[name]
		}
		if v != "" {
			return gateway.Credential{Name: name, Value: v}, true
		}
	}
	return gateway.Credential{}, false
}

// PreflightGateway checks, before ralph touches an issue, that ralph holds the model key its gateway needs
// (ralph's environment, under one of the vendor's variables), and that the upstream is usable.
func PreflightGateway(c config.Config, env []string) error {
	v := gateway.Vendor(c.GatewayVendor())
	if v == "" {
		return nil
	}
	cred, ok := ModelCredential(v, env, c.Agent.Env)
	if !ok {
		return fmt.Errorf("the agent cannot run here, so ralph left the issue alone: ralph's model gateway needs the %s key in ralph's environment, as %s (from a secret, in the workflow step's env); ralph keeps it, and the agent gets a key of the gateway's, good for one run",
			v, strings.Join(v.CredentialNames(), " or "))
	}
	if _, err := gateway.New(gateway.Options{Vendor: v, Upstream: c.GatewayUpstream(string(v)), Credential: cred}); err != nil {
		return fmt.Errorf("the agent cannot run here, so ralph left the issue alone: %w", err)
	}
	return nil
}
