package workspace

import (
	"os"
	"path/filepath"

	"github.com/ralph-dev/gh-ralph/internal/sandbox"
)

// homeToolDirs are where toolchain managers install under a person's home: pyenv, nvm, rustup and cargo,
// asdf, mise, volta, goenv, sdkman, fnm.
var homeToolDirs = []string{".pyenv", ".nvm", ".rustup", ".cargo", ".asdf", ".local/share/mise", ".volta", ".goenv", ".sdkman", ".local/share/fnm"}

// HomeTools are the toolchain directories under home to show the agent's uid read-only (sandbox.Config's
// Home and HomeTools), when home is closed to that uid and has any; "" and nil otherwise.
func HomeTools(home string, uid, gid int) (string, []string) {
	if home == "" || !filepath.IsAbs(home) || filepath.Clean(home) == "/" || sandbox.CanReach(home, uid, gid) {
		return "", nil
	}
	home = filepath.Clean(home)
	var tools []string
	for _, d := range homeToolDirs {
		p := filepath.Join(home, d)
		if st, err := os.Lstat(p); err == nil && st.IsDir() {
			tools = append(tools, p)
		}
	}
	if len(tools) == 0 {
		return "", nil
	}
	return home, tools
}
