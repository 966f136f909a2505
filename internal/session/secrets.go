package session

import (
	"sort"
	"strings"
)

// minSecret: shorter values are left out of the secret checks, which would match ordinary text.
const minSecret = 8

// secrets are the values ralph must never let reach GitHub, by name: its token, and what agent.env passes
// through from ralph's environment (the model key, say), which the agent holds and a prompt-injected agent
// would write into a document, a commit or its output.
func (r *Session) secrets() map[string]string {
	out := map[string]string{}
	for _, s := range r.secretNames {
		if len(s) >= minSecret {
			out[s] = "ralph's GitHub token"
		}
	}
	from := map[string]string{}
	for _, kv := range r.baseEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			from[k] = v
		}
	}
	for name, value := range r.cfg.Agent.Env {
		if value != "" {
			continue // written in the config, which is in the repository: not a secret
		}
		if v := from[name]; len(v) >= minSecret {
			out[v] = name
		}
	}
	return out
}

// Leaks names the secrets whose values text holds.
func (r *Session) Leaks(text string) []string { return leaksIn(r.secrets(), text) }

// leaksIn names the secrets (value → name) whose values text holds.
func leaksIn(secrets map[string]string, text string) []string {
	var names []string
	for value, name := range secrets {
		if strings.Contains(text, value) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Redact replaces every secret's value in text with ***.
func (r *Session) Redact(text string) string {
	for value := range r.secrets() {
		text = strings.ReplaceAll(text, value, "***")
	}
	return text
}
