package front

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// connection's goroutine, its watch, and the fallback's must all stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
