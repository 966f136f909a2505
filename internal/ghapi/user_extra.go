package ghapi

import (
	"context"
	"net/http"
)

// CurrentUser reads the account the token belongs to (GET /user): the person who runs `gh ralph`.
func (c *Client) CurrentUser(ctx context.Context) (User, error) {
	var u User
	_, err := c.do(ctx, http.MethodGet, c.endpoints.API+"/user", nil, &u)
	return u, err
}
