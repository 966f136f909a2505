package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// CurrentUser reads the account the token belongs to (GET /user): the person who runs `gh ralph`.
func (c *Client) CurrentUser(ctx context.Context) (User, error) {
	var u User
	_, err := c.do(ctx, http.MethodGet, c.endpoints.API+"/user", nil, &u)
	return u, err
}

// Viewer reads the login of the account the token belongs to with GraphQL, which answers every kind of
// token: a person's, and a GitHub App installation's (a bot, "<app>[bot]"), for which GET /user is refused.
func (c *Client) Viewer(ctx context.Context) (string, error) {
	var out struct {
		Data struct {
			Viewer struct {
				Login string `json:"login"`
			} `json:"viewer"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := c.do(readQuery(ctx, "query{viewer{login}}"), http.MethodPost, c.endpoints.GraphQL, map[string]string{"query": "query{viewer{login}}"}, &out); err != nil {
		return "", err
	}
	if len(out.Errors) > 0 {
		return "", fmt.Errorf("GraphQL: %s", out.Errors[0].Message)
	}
	if out.Data.Viewer.Login == "" {
		return "", errors.New("GraphQL: the viewer has no login")
	}
	return out.Data.Viewer.Login, nil
}

// CheckToken asks GitHub whether it takes the token (GET /rate_limit, which GitHub does not count against
// the rate limit) and returns the refusal (IsAuth) when it does not; any other answer passes (an Enterprise
// server without rate limits answers 404), and the run meets it where it matters. Asked before ralph's git
// uses the token: git would only say that it cannot prompt for a user name.
func (c *Client) CheckToken(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodGet, c.endpoints.API+"/rate_limit", nil, nil)
	if IsAuth(err) {
		return err
	}
	return nil
}
