package ghapi

import (
	"context"
	"net/http"
)

// EmptyTree is git's tree with no entries; a commit on it carries only its message (ralph's locks do).
const EmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// GitCommit is a commit object as the git database API shows it.
type GitCommit struct {
	SHA     string `json:"sha"`
	Message string `json:"message"`
	Parents []struct {
		SHA string `json:"sha"`
	} `json:"parents"`
	// Verification is GitHub's check of the commit's signature.
	Verification struct {
		Verified bool   `json:"verified"`
		Reason   string `json:"reason"`
		// Payload is the commit object without its gpgsig header, Signature that header's value: with
		// them the signed commit can be written locally, byte for byte, without fetching it.
		Payload   string `json:"payload"`
		Signature string `json:"signature"`
	} `json:"verification"`
}

// CreateCommit writes a commit object (no ref moves).
func (c *Client) CreateCommit(ctx context.Context, message, tree string, parents []string) (GitCommit, error) {
	if parents == nil {
		parents = []string{}
	}
	var gc GitCommit
	_, err := c.do(ctx, http.MethodPost, c.repoPath("git", "commits"), map[string]any{"message": message, "tree": tree, "parents": parents}, &gc)
	return gc, err
}

// Commit reads a commit object.
func (c *Client) Commit(ctx context.Context, sha string) (GitCommit, error) {
	var gc GitCommit
	_, err := c.do(ctx, http.MethodGet, c.repoPath("git", "commits", sha), nil, &gc)
	return gc, err
}
