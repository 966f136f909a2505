package githubtest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"golang.org/x/crypto/nacl/box"
)

// The Actions settings, secrets and workflows answer as GitHub's description says, and a secret sealed to
// the repository's public key (as gh secret set seals it) is stored and can be read back by the test.
func TestActionsSettingsAndSecrets(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{})
	const repo = "/repos/octo/demo"

	r := do(t, s, "GET", repo+"/actions/permissions/workflow", nil)
	if r.status != 200 || string(r.body) == "" {
		t.Fatalf("workflow permissions: %d %s", r.status, r.body)
	}
	var wp map[string]any
	_ = json.Unmarshal(r.body, &wp)
	if wp["default_workflow_permissions"] != "read" || wp["can_approve_pull_request_reviews"] != true {
		t.Errorf("the test repository's defaults: %v", wp)
	}
	s.SetWorkflowPermissions("read", false)
	if r := do(t, s, "POST", repo+"/pulls", map[string]any{"title": "x", "head": "main", "base": "main"}); r.status != 403 {
		t.Errorf("the Actions token opened a pull request where Actions may not: %d %s", r.status, r.body)
	}
	if r := do(t, s, "PUT", repo+"/actions/permissions/workflow", map[string]any{"can_approve_pull_request_reviews": true}); r.status != 204 || !s.CanCreatePulls() {
		t.Errorf("PUT workflow permissions: %d %s", r.status, r.body)
	}
	if r := do(t, s, "PUT", repo+"/actions/permissions/workflow", map[string]any{"default_workflow_permissions": "admin"}); r.status != 422 {
		t.Errorf("a value GitHub's description does not allow: %d", r.status)
	}
	if r := do(t, s, "GET", repo+"/actions/permissions", nil); r.status != 200 {
		t.Errorf("actions permissions: %d %s", r.status, r.body)
	}
	s.SetActionsPermissions(true, "selected")
	if r := do(t, s, "GET", repo+"/actions/permissions", nil); r.status != 200 {
		t.Errorf("actions permissions, selected: %d %s", r.status, r.body)
	}

	r = do(t, s, "GET", repo+"/actions/secrets/public-key", nil)
	var key struct {
		KeyID string `json:"key_id"`
		Key   string `json:"key"`
	}
	if err := json.Unmarshal(r.body, &key); err != nil || r.status != 200 {
		t.Fatalf("public key: %d %s", r.status, r.body)
	}
	raw, _ := base64.StdEncoding.DecodeString(key.Key)
	var pub [32]byte
	copy(pub[:], raw)
	sealed, err := box.SealAnonymous(nil, []byte("sk-secret"), &pub, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r = do(t, s, "PUT", repo+"/actions/secrets/ANTHROPIC_API_KEY", map[string]any{"encrypted_value": base64.StdEncoding.EncodeToString(sealed), "key_id": key.KeyID})
	if r.status != http.StatusCreated {
		t.Fatalf("PUT secret: %d %s", r.status, r.body)
	}
	if v, ok := s.Secret("ANTHROPIC_API_KEY"); !ok || v != "sk-secret" {
		t.Errorf("the stored secret: %q %v", v, ok)
	}
	if r := do(t, s, "GET", repo+"/actions/secrets", nil); r.status != 200 || !json.Valid(r.body) {
		t.Errorf("list secrets: %d %s", r.status, r.body)
	}
	if r := do(t, s, "GET", repo+"/actions/secrets/NOPE", nil); r.status != 404 {
		t.Errorf("a missing secret: %d", r.status)
	}
	if r := do(t, s, "GET", repo+"/actions/organization-secrets", nil); r.status != 200 {
		t.Errorf("organization secrets: %d %s", r.status, r.body)
	}

	if r := do(t, s, "GET", repo+"/actions/workflows/ralph.yml", nil); r.status != 404 {
		t.Errorf("a workflow not pushed: %d", r.status)
	}
	s.AddWorkflow(".github/workflows/ralph.yml", "ralph")
	s.SetWorkflowState(".github/workflows/ralph.yml", "disabled_manually")
	r = do(t, s, "GET", repo+"/actions/workflows/ralph.yml", nil)
	if r.status != 200 || !json.Valid(r.body) {
		t.Errorf("workflow: %d %s", r.status, r.body)
	}
	if r := do(t, s, "GET", repo+"/actions/workflows", nil); r.status != 200 {
		t.Errorf("workflows: %d %s", r.status, r.body)
	}
}
