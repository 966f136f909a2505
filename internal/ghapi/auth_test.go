package ghapi

import (
	"errors"
	"fmt"
	"testing"
)

func TestIsAuth(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&AuthError{Err: errors.New("no GitHub token")}, true},
		{fmt.Errorf("reading #1: %w", &Error{Status: 401, Message: "Bad credentials"}), true},
		{&Error{Status: 403, Message: "Forbidden"}, false},
		{errors.New("something else"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := IsAuth(tt.err); got != tt.want {
			t.Errorf("IsAuth(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
