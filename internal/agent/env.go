package agent

import (
	"sort"
	"strings"

	"github.com/ralph-dev/gh-ralph/internal/config"
)

// allowed are the variables of ralph's own environment the agent gets without asking: what programs need
// to find each other, speak the locale and reach the network. Nothing else of ralph's environment
// reaches it; agent.env names the rest.
var allowed = map[string]bool{
	"PATH": true, "LANG": true, "LANGUAGE": true, "TERM": true, "TZ": true, "COLORTERM": true, "NO_COLOR": true,
	"CI": true, "SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "NODE_EXTRA_CA_CERTS": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "http_proxy": true, "https_proxy": true, "no_proxy": true,
}

// Forbidden says whether a variable may never reach the agent: a credential or a file command of the
// runner (config.CredentialNames, the one list the config's check uses too), an action input (INPUT_*,
// the token among them) or the runner's own (ACTIONS_*: the runtime token and cache URLs).
func Forbidden(key string) bool {
	k := strings.ToUpper(key)
	for _, n := range config.CredentialNames {
		if k == n {
			return true
		}
	}
	return strings.HasPrefix(k, "INPUT_") || strings.HasPrefix(k, "ACTIONS_")
}

// holdsSecret reports whether value contains one of the secrets.
func holdsSecret(value string, secrets []string) bool {
	for _, s := range secrets {
		if s != "" && strings.Contains(value, s) {
			return true
		}
	}
	return false
}

// Getenv is the value of key in env (KEY=VALUE entries), the last one as for a process; "" when unset.
func Getenv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// Environ builds the agent's environment from base (ralph's own): the allowlisted variables (and LC_*),
// then extra (agent.env): a key with a value sets it; a key with an empty value passes that variable
// through from base, which is how a user hands the agent a secret of their own. A forbidden variable is
// never passed, and no value that contains one of secrets (ralph's token), whatever its name.
func Environ(base []string, secrets []string, extra map[string]string) []string {
	keep := func(key, value string) bool {
		return !Forbidden(key) && !holdsSecret(value, secrets)
	}
	from := map[string]string{} // the last value of each key in base
	var order []string
	for _, kv := range base {
		key, value, ok := strings.Cut(kv, "=")
		if !ok || key == "" {
			continue
		}
		if _, seen := from[key]; !seen {
			order = append(order, key)
		}
		from[key] = value
	}
	var env []string
	for _, key := range order {
		if _, overridden := extra[key]; overridden {
			continue
		}
		if (allowed[key] || strings.HasPrefix(key, "LC_")) && keep(key, from[key]) {
			env = append(env, key+"="+from[key])
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		value := extra[key]
		if value == "" {
			v, ok := from[key]
			if !ok {
				continue
			}
			value = v
		}
		if key != "" && !strings.Contains(key, "=") && keep(key, value) {
			env = append(env, key+"="+value)
		}
	}
	return env
}

// Missing lists the variables agent.env passes through (an empty value) that ralph's environment does
// not have or has empty: an API key the workflow forgot to give.
func Missing(base []string, extra map[string]string) []string {
	have := map[string]bool{}
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok && v != "" {
			have[k] = true
		}
	}
	var missing []string
	for k, v := range extra {
		if v == "" && !have[k] && !Forbidden(k) {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	return missing
}

// proxyVars are the variables through which programs find a proxy: with the network's allow-list the
// agent gets ralph's proxy, and none of the runner's (ralph's proxy goes through the runner's itself).
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy", "NODE_USE_ENV_PROXY"}

// noProxy is where the agent goes without the proxy: loopback, where ralph's model gateway is.
const noProxy = "127.0.0.1,localhost,::1"

// WithProxy is env with proxyURL as the only proxy: the variables curl, Go, Python, npm, pip, cargo,
// Codex and Claude Code read, in both cases, NODE_USE_ENV_PROXY for Node's own fetch (Node 24 and later),
// and NO_PROXY for loopback, so that the CLIs reach the model gateway directly.
func WithProxy(env []string, proxyURL string) []string {
	drop := map[string]bool{}
	for _, v := range proxyVars {
		drop[v] = true
	}
	out := make([]string, 0, len(env)+len(proxyVars))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, "HTTP_PROXY="+proxyURL, "HTTPS_PROXY="+proxyURL, "http_proxy="+proxyURL, "https_proxy="+proxyURL,
		"NO_PROXY="+noProxy, "no_proxy="+noProxy, "NODE_USE_ENV_PROXY=1")
}
