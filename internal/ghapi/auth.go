package ghapi

import (
	"errors"
	"net/http"
)

// ExitAuth is the exit status of a command whose GitHub token is missing or refused, as gh exits when it is
// not authenticated. Both of ralph's doors (the Action and gh ralph) exit with it.
const ExitAuth = 4

// AuthError: no token for GitHub, or GitHub did not accept it. Hint is what to do, on the lines after the
// error ("" when the door says it its own way).
type AuthError struct {
	Host string
	Err  error
	Hint string
}

func (e *AuthError) Error() string {
	if e.Hint == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + "\n" + e.Hint
}
func (e *AuthError) Unwrap() error { return e.Err }

// IsAuth says whether err is a token that is missing or that GitHub refused (401).
func IsAuth(err error) bool {
	var ae *AuthError
	var api *Error
	return errors.As(err, &ae) || errors.As(err, &api) && api.Status == http.StatusUnauthorized
}
