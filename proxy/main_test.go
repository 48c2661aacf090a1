package proxy

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// proxy, its state, the reload loop and its watcher must all stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
