package engine_test

import (
	"testing"
)

// crashAt makes the engine stop (panic) at the k-th time it reaches checkpoint name, runs f, and recovers:
// the process died between two writes.
func crashAt(t *testing.T, h *harness, name string, k int, f func()) {
	t.Helper()
	seen := 0
	h.eng.Checkpoint = func(at string) {
		if at == name {
			seen++
			if seen == k {
				panic("crash at " + at)
			}
		}
	}
	defer func() {
		if r := recover(); r == nil {
			t.Fatalf("the run did not reach checkpoint %s", name)
		}
	}()
	f()
}
