// The test server's REST handlers: git data.

package githubtest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"
)

func (s *Server) refJSON(r gitRef) map[string]any {
	short := strings.TrimPrefix(r.name, "refs/")
	return map[string]any{
		"ref": r.name, "node_id": "REF_" + base64.RawURLEncoding.EncodeToString([]byte(r.name)),
		"url":    s.repoAPI() + "/git/refs/" + short,
		"object": map[string]any{"type": r.kind, "sha": r.sha, "url": s.repoAPI() + "/git/" + r.kind + "s/" + r.sha},
	}
}

func (s *Server) getRef(c *call) (int, any) {
	r, ok, err := s.ref("refs/" + c.params["ref"])
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	if !ok {
		return notFound()
	}
	return http.StatusOK, s.refJSON(r)
}

func (s *Server) matchingRefs(c *call) (int, any) {
	refs, err := s.refs("refs/" + c.params["ref"])
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	out := []any{}
	for _, r := range refs {
		out = append(out, s.refJSON(r))
	}
	return http.StatusOK, out
}

func (s *Server) createRefOp(c *call) (int, any) {
	name, _ := c.str("ref")
	sha, _ := c.str("sha")
	if !strings.HasPrefix(name, "refs/") || strings.Count(name, "/") < 2 {
		return unprocessable(fmt.Sprintf("%s is not a valid ref name.", name))
	}
	if _, err := s.git(nil, "check-ref-format", name); err != nil {
		return unprocessable(fmt.Sprintf("%s is not a valid ref name.", name))
	}
	if s.objectType(sha) == "" {
		return unprocessable("Object does not exist")
	}
	if msg := s.ruleViolations(name, zeroSHA, sha); msg != "" {
		return unprocessable(msg)
	}
	if err := s.createRef(name, sha); err == errRefExists {
		return unprocessable("Reference already exists")
	} else if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	r, _, err := s.ref(name)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	c.w.Header().Set("Location", s.repoAPI()+"/git/"+name)
	return http.StatusCreated, s.refJSON(r)
}

func (s *Server) updateRefOp(c *call) (int, any) {
	name := "refs/" + c.params["ref"]
	sha, _ := c.str("sha")
	old, ok, err := s.ref(name)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	if !ok {
		return unprocessable("Reference does not exist")
	}
	if s.objectType(sha) == "" {
		return unprocessable("Object does not exist")
	}
	if !c.boolean("force") && !s.isAncestor(old.sha, sha) {
		return unprocessable("Update is not a fast forward")
	}
	if msg := s.ruleViolations(name, old.sha, sha); msg != "" {
		return unprocessable(msg)
	}
	if err := s.updateRef(name, sha, old.sha); err != nil {
		// Moved by someone else since we read it: GitHub refuses too.
		return unprocessable("Reference cannot be updated")
	}
	r, _, err := s.ref(name)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	return http.StatusOK, s.refJSON(r)
}

func (s *Server) deleteRefOp(c *call) (int, any) {
	name := "refs/" + c.params["ref"]
	old, ok, err := s.ref(name)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	if !ok {
		return unprocessable("Reference does not exist")
	}
	if err := s.retryLocked(func() error {
		_, err := s.git(nil, "update-ref", "-d", name, old.sha)
		return err
	}); err != nil {
		return unprocessable("Reference cannot be deleted")
	}
	return http.StatusNoContent, nil
}

func (s *Server) personJSON(p gitPerson) map[string]any {
	return map[string]any{"name": p.name, "email": p.email, "date": timeJSON(p.date)}
}

func (s *Server) parentsJSON(parents []string) []any {
	out := []any{}
	for _, p := range parents {
		out = append(out, map[string]any{"sha": p, "url": s.repoAPI() + "/git/commits/" + p,
			"html_url": s.repoHTML() + "/commit/" + p})
	}
	return out
}

func (s *Server) gitCommitJSON(gc gitCommit) map[string]any {
	return map[string]any{
		"sha": gc.sha, "node_id": "C_" + gc.sha, "url": s.repoAPI() + "/git/commits/" + gc.sha,
		"html_url": s.repoHTML() + "/commit/" + gc.sha,
		"author":   s.personJSON(gc.author), "committer": s.personJSON(gc.committer), "message": gc.message,
		"tree":         map[string]any{"sha": gc.tree, "url": s.repoAPI() + "/git/trees/" + gc.tree},
		"parents":      s.parentsJSON(gc.parents),
		"verification": s.verificationJSON(gc.sha),
	}
}

// commitJSON is a commit as the repository-commits endpoints show it.
func (s *Server) commitJSON(gc gitCommit) map[string]any {
	return map[string]any{
		"sha": gc.sha, "node_id": "C_" + gc.sha, "url": s.repoAPI() + "/commits/" + gc.sha,
		"html_url": s.repoHTML() + "/commit/" + gc.sha, "comments_url": s.repoAPI() + "/commits/" + gc.sha + "/comments",
		"commit": map[string]any{
			"url": s.repoAPI() + "/git/commits/" + gc.sha, "author": s.personJSON(gc.author),
			"committer": s.personJSON(gc.committer), "message": gc.message, "comment_count": 0,
			"tree": map[string]any{"sha": gc.tree, "url": s.repoAPI() + "/git/trees/" + gc.tree},
		},
		"author": nil, "committer": nil, "parents": s.parentsJSON(gc.parents),
	}
}

func (s *Server) getBranch(c *call) (int, any) {
	name := c.params["branch"]
	sha := s.branchSHA(name)
	if sha == "" {
		return http.StatusNotFound, errorBody("Branch not found")
	}
	gc, err := s.readCommit(sha)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	api := s.repoAPI() + "/branches/" + name
	return http.StatusOK, map[string]any{
		"name": name, "commit": s.commitJSON(gc), "protected": false, "protection_url": api + "/protection",
		"protection": map[string]any{"enabled": false,
			"required_status_checks": map[string]any{"enforcement_level": "off", "contexts": []any{}, "checks": []any{}}},
		"_links": map[string]any{"self": api, "html": s.repoHTML() + "/tree/" + name},
	}
}

func (s *Server) getCommit(c *call) (int, any) {
	ref := c.params["ref"]
	sha := s.resolveCommit(ref)
	if sha == "" {
		return unprocessable("No commit found for SHA: " + ref)
	}
	gc, err := s.readCommit(sha)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	return http.StatusOK, s.commitJSON(gc)
}

func (s *Server) createBlob(c *call) (int, any) {
	content, _ := c.str("content")
	data := []byte(content)
	switch enc, _ := c.str("encoding"); enc {
	case "", "utf-8":
	case "base64":
		d, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(content, "\n", ""))
		if err != nil {
			return unprocessable("content is not valid Base64")
		}
		data = d
	default:
		return unprocessable(fmt.Sprintf("encoding %q is not supported", enc))
	}
	sha, err := s.git(strings.NewReader(string(data)), "hash-object", "-w", "--stdin")
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	return http.StatusCreated, map[string]any{"url": s.repoAPI() + "/git/blobs/" + sha, "sha": sha}
}

func (s *Server) getBlob(c *call) (int, any) {
	sha := c.params["file_sha"]
	if s.objectType(sha) != "blob" {
		return notFound()
	}
	data, err := gitCommand(s.BareRepo, nil, "cat-file", "blob", sha).Output()
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	// GitHub wraps Base64 content at 60 characters.
	enc := base64.StdEncoding.EncodeToString(data)
	var lines []string
	for len(enc) > 60 {
		lines, enc = append(lines, enc[:60]), enc[60:]
	}
	lines = append(lines, enc)
	return http.StatusOK, map[string]any{
		"sha": sha, "node_id": "B_" + sha, "url": s.repoAPI() + "/git/blobs/" + sha, "size": len(data),
		"content": strings.Join(lines, "\n") + "\n", "encoding": "base64",
	}
}

func personArg(v any) (*gitPerson, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil
	}
	p := &gitPerson{}
	p.name, _ = m["name"].(string)
	p.email, _ = m["email"].(string)
	if d, ok := m["date"].(string); ok {
		t, err := time.Parse(time.RFC3339, d)
		if err != nil {
			return nil, fmt.Errorf("date %q is not an ISO 8601 timestamp", d)
		}
		p.date = t
	}
	return p, nil
}

func (s *Server) createGitCommit(c *call) (int, any) {
	message, _ := c.str("message")
	tree, _ := c.str("tree")
	if s.objectType(tree) != "tree" {
		return unprocessable("Tree SHA does not exist")
	}
	var parents []string
	ps, _ := c.body["parents"].([]any)
	for _, p := range ps {
		sha, _ := p.(string)
		if s.objectType(sha) != "commit" {
			return unprocessable("Parent SHA does not exist or is not a commit object")
		}
		parents = append(parents, sha)
	}
	author, err := personArg(c.body["author"])
	if err != nil {
		return unprocessable("Invalid request.\n\nauthor: " + err.Error())
	}
	committer, err := personArg(c.body["committer"])
	if err != nil {
		return unprocessable("Invalid request.\n\ncommitter: " + err.Error())
	}
	// GitHub signs a commit its API makes when the request gives no author, committer or signature (its
	// "signature verification for bots"): such a commit carries its signature and shows Verified.
	var sha string
	if author == nil && committer == nil && c.body["signature"] == nil && !s.opts.NoWebCommitSigning {
		sha, err = s.writeSignedCommit(tree, parents, message)
	} else {
		if committer == nil {
			committer = author
		}
		sha, err = s.writeCommit(tree, parents, message, author, committer)
	}
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	gc, err := s.readCommit(sha)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	c.w.Header().Set("Location", s.repoAPI()+"/git/commits/"+sha)
	return http.StatusCreated, s.gitCommitJSON(gc)
}

func (s *Server) getGitCommit(c *call) (int, any) {
	sha := c.params["commit_sha"]
	if s.objectType(sha) != "commit" {
		return notFound()
	}
	gc, err := s.readCommit(sha)
	if err != nil {
		return http.StatusInternalServerError, errorBody(err.Error())
	}
	return http.StatusOK, s.gitCommitJSON(gc)
}
