package githubtest

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"path"
	"slices"
	"sort"
	"strconv"
	"time"

	"golang.org/x/crypto/nacl/box"
)

// actionsState is the repository's GitHub Actions settings, secrets and workflows.
type actionsState struct {
	enabled        bool
	allowed        string // all, local_only, selected
	shaPinning     bool
	defaultPerms   string // read or write
	canApprovePRs  bool   // "Allow GitHub Actions to create and approve pull requests"
	publicKey      *[32]byte
	privateKey     *[32]byte
	secrets        map[string]*secret
	workflows      map[string]*workflowFile // by path, .github/workflows/NAME.yml
	nextWorkflowID int64
}

type secret struct {
	value            string // decrypted: the server holds the private key
	created, updated time.Time
}

type workflowFile struct {
	id          int64
	name, path  string
	state       string
	created, up time.Time
}

// newActionsState is a repository set up for ralph: Actions on for all actions, the Actions token
// read-only by default (GitHub's default since 2023) and allowed to create pull requests (GitHub's default
// is not: SetWorkflowPermissions makes a repository as GitHub creates it).
func newActionsState() actionsState {
	pub, priv, err := box.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return actionsState{enabled: true, allowed: "all", defaultPerms: "read", canApprovePRs: true, publicKey: pub, privateKey: priv,
		secrets: map[string]*secret{}, workflows: map[string]*workflowFile{}, nextWorkflowID: 161335}
}

// SetActionsPermissions sets the repository's Actions permissions: whether Actions run at all, and which
// actions (all, local_only, selected).
func (s *Server) SetActionsPermissions(enabled bool, allowed string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions.enabled, s.actions.allowed = enabled, allowed
}

// SetWorkflowPermissions sets the default permissions of the Actions token (read or write) and whether
// Actions may create and approve pull requests.
func (s *Server) SetWorkflowPermissions(defaultPerms string, canApprovePRs bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actions.defaultPerms, s.actions.canApprovePRs = defaultPerms, canApprovePRs
}

// CanCreatePulls says whether the Actions token may open pull requests.
func (s *Server) CanCreatePulls() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.actions.canApprovePRs
}

// Secret is the value of a repository secret, as the server decrypted it.
func (s *Server) Secret(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, ok := s.actions.secrets[name]
	if !ok {
		return "", false
	}
	return sec.value, true
}

// SetSecret stores a repository secret.
func (s *Server) SetSecret(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.actions.secrets[name] = &secret{value: value, created: now, updated: now}
}

// AddWorkflow registers a workflow file on the default branch, as GitHub does when one is pushed
// (name: its name: key).
func (s *Server) AddWorkflow(file, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addWorkflow(file, name)
}

func (s *Server) addWorkflow(file, name string) *workflowFile {
	if w, ok := s.actions.workflows[file]; ok {
		return w
	}
	s.actions.nextWorkflowID++
	w := &workflowFile{id: s.actions.nextWorkflowID, name: name, path: file, state: "active", created: s.now(), up: s.now()}
	s.actions.workflows[file] = w
	return w
}

// SetWorkflowState sets a workflow's state (active, disabled_manually, …).
func (s *Server) SetWorkflowState(file, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.actions.workflows[file]; ok {
		w.state = state
	}
}

func (s *Server) getActionsPermissions(c *call) (int, any) {
	m := map[string]any{"enabled": s.actions.enabled, "sha_pinning_required": s.actions.shaPinning}
	if s.actions.enabled {
		m["allowed_actions"] = s.actions.allowed
		if s.actions.allowed == "selected" {
			m["selected_actions_url"] = s.repoAPI() + "/actions/permissions/selected-actions"
		}
	}
	return http.StatusOK, m
}

func (s *Server) putActionsPermissions(c *call) (int, any) {
	s.actions.enabled = c.boolean("enabled")
	if a, ok := c.str("allowed_actions"); ok {
		s.actions.allowed = a
	}
	if _, ok := c.body["sha_pinning_required"]; ok {
		s.actions.shaPinning = c.boolean("sha_pinning_required")
	}
	return http.StatusNoContent, nil
}

func (s *Server) getWorkflowPermissions(c *call) (int, any) {
	return http.StatusOK, map[string]any{"default_workflow_permissions": s.actions.defaultPerms, "can_approve_pull_request_reviews": s.actions.canApprovePRs}
}

func (s *Server) putWorkflowPermissions(c *call) (int, any) {
	if p, ok := c.str("default_workflow_permissions"); ok {
		s.actions.defaultPerms = p
	}
	if _, ok := c.body["can_approve_pull_request_reviews"]; ok {
		s.actions.canApprovePRs = c.boolean("can_approve_pull_request_reviews")
	}
	return http.StatusNoContent, nil
}

func (s *Server) keyID() string { return "568250167242549743" }

func (s *Server) getSecretsPublicKey(c *call) (int, any) {
	return http.StatusOK, map[string]any{"key_id": s.keyID(), "key": base64.StdEncoding.EncodeToString(s.actions.publicKey[:])}
}

func secretJSON(name string, sec *secret) map[string]any {
	return map[string]any{"name": name, "created_at": timeJSON(sec.created), "updated_at": timeJSON(sec.updated)}
}

func (s *Server) listSecrets(c *call) (int, any) {
	names := make([]string, 0, len(s.actions.secrets))
	for n := range s.actions.secrets {
		names = append(names, n)
	}
	sort.Strings(names)
	lo, hi := c.page(len(names))
	list := []any{}
	for _, n := range names[lo:hi] {
		list = append(list, secretJSON(n, s.actions.secrets[n]))
	}
	return http.StatusOK, map[string]any{"total_count": len(names), "secrets": list}
}

func (s *Server) listOrgSecrets(c *call) (int, any) {
	c.page(0)
	return http.StatusOK, map[string]any{"total_count": 0, "secrets": []any{}}
}

func (s *Server) getSecret(c *call) (int, any) {
	sec, ok := s.actions.secrets[c.params["secret_name"]]
	if !ok {
		return notFound()
	}
	return http.StatusOK, secretJSON(c.params["secret_name"], sec)
}

// putSecret decrypts the value as GitHub would (a libsodium sealed box to the repository's public key).
func (s *Server) putSecret(c *call) (int, any) {
	name := c.params["secret_name"]
	if id, _ := c.str("key_id"); id != s.keyID() {
		return unprocessable("Bad request: key_id does not match the repository's public key")
	}
	enc, _ := c.str("encrypted_value")
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return unprocessable("encrypted_value is not base64")
	}
	plain, ok := box.OpenAnonymous(nil, raw, s.actions.publicKey, s.actions.privateKey)
	if !ok {
		return unprocessable("encrypted_value cannot be decrypted with the repository's public key")
	}
	now := s.now()
	if sec, ok := s.actions.secrets[name]; ok {
		sec.value, sec.updated = string(plain), now
		return http.StatusNoContent, nil
	}
	s.actions.secrets[name] = &secret{value: string(plain), created: now, updated: now}
	return http.StatusCreated, map[string]any{}
}

func (s *Server) deleteSecret(c *call) (int, any) {
	if _, ok := s.actions.secrets[c.params["secret_name"]]; !ok {
		return notFound()
	}
	delete(s.actions.secrets, c.params["secret_name"])
	return http.StatusNoContent, nil
}

func (s *Server) workflowJSON(w *workflowFile) map[string]any {
	return map[string]any{
		"id": w.id, "node_id": fmt.Sprintf("W_%d", w.id), "name": w.name, "path": w.path, "state": w.state,
		"created_at": timeJSON(w.created), "updated_at": timeJSON(w.up),
		"url":       fmt.Sprintf("%s/actions/workflows/%d", s.repoAPI(), w.id),
		"html_url":  fmt.Sprintf("%s/blob/%s/%s", s.repoHTML(), s.opts.DefaultBranch, w.path),
		"badge_url": fmt.Sprintf("%s/workflows/%s/badge.svg", s.repoHTML(), w.name),
	}
}

// findWorkflow is a workflow by its id or its file name, as GitHub takes either.
func (s *Server) findWorkflow(id string) *workflowFile {
	for _, w := range s.actions.workflows {
		if strconv.FormatInt(w.id, 10) == id || path.Base(w.path) == id {
			return w
		}
	}
	return nil
}

func (s *Server) getWorkflow(c *call) (int, any) {
	w := s.findWorkflow(c.params["workflow_id"])
	if w == nil {
		return notFound()
	}
	return http.StatusOK, s.workflowJSON(w)
}

func (s *Server) listWorkflows(c *call) (int, any) {
	paths := make([]string, 0, len(s.actions.workflows))
	for p := range s.actions.workflows {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	lo, hi := c.page(len(paths))
	list := []any{}
	for _, p := range paths[lo:hi] {
		list = append(list, s.workflowJSON(s.actions.workflows[p]))
	}
	return http.StatusOK, map[string]any{"total_count": len(paths), "workflows": list}
}
