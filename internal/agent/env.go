package agent

import (
	"sort"
	"strings"
)

// credentialNames are the variables through which ralph (or the Actions runner)
// holds a credential. Any INPUT_* variable is one too: action inputs, token among them.
var credentialNames = map[string]bool{
	"GITHUB_TOKEN":                   true,
	"GH_TOKEN":                       true,
	"GH_ENTERPRISE_TOKEN":            true,
	"GITHUB_ENTERPRISE_TOKEN":        true,
	"ACTIONS_RUNTIME_TOKEN":          true,
	"ACTIONS_RUNTIME_URL":            true,
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN": true,
	"ACTIONS_ID_TOKEN_REQUEST_URL":   true,
}

func isCredentialName(key string) bool {
	k := strings.ToUpper(key)
	return credentialNames[k] || strings.HasPrefix(k, "INPUT_")
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

// Environ builds the agent's environment from base (ralph's own). It removes every
// credential: the variables named above, any INPUT_* variable, and any variable
// whose value contains one of secrets, whatever its name. Then it adds extra
// (agent.env): a key with a value sets it; a key with an empty value passes that
// variable through from base, which is how a user hands the agent a secret of
// their own. A credential removed above is never passed through or set, and a
// value that contains a secret is never set.
func Environ(base []string, secrets []string, extra map[string]string) []string {
	keep := func(key, value string) bool {
		return !isCredentialName(key) && !holdsSecret(value, secrets)
	}
	from := map[string]string{} // the last value of each key in base
	var env []string
	for _, kv := range base {
		key, value, ok := strings.Cut(kv, "=")
		if !ok || key == "" {
			continue
		}
		from[key] = value
		if _, overridden := extra[key]; overridden {
			continue
		}
		if keep(key, value) {
			env = append(env, kv)
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
