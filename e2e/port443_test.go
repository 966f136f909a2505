package e2e

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// listen443 listens on 127.0.0.1:443, where the tests that run the real gh serve the test server as
// https://localhost (gh takes an Enterprise host's API at its default port). Another program on the port
// (another test run on the machine, a web server) is waited for a little and then skipped, as is a user
// that may not bind it (not root): neither is a fault of ralph's.
func listen443(t *testing.T) net.Listener {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:443")
		switch {
		case err == nil:
			return ln
		case errors.Is(err, syscall.EADDRINUSE) && time.Now().Before(deadline):
			time.Sleep(500 * time.Millisecond)
			continue
		case errors.Is(err, syscall.EADDRINUSE):
			t.Skipf("port 443 is taken by another program (%v): this test serves the test server as https://localhost there; free the port to run it", err)
		case errors.Is(err, syscall.EACCES) && os.Geteuid() != 0:
			t.Skipf("serving the test server as https://localhost needs port 443, which only root may bind (run as root, as CI does): %v", err)
		}
		t.Fatalf("listening on 127.0.0.1:443: %v", err)
	}
}
