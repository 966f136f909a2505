//go:build nodemo

package cli

import (
	"context"
	"errors"
)

// The Action's images are built with the nodemo tag: the demo's GitHub (a test server with GitHub's API
// description and its checks) is no use to a workflow run, and is a quarter of the binary.
func demoRun(context.Context, *Factory) error {
	return errors.New("this build of ralph (the Action's image) has no demo: run `gh ralph demo` from the gh extension (gh extension install ralph-dev/gh-ralph)")
}
