package mcp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// sessions, the pipeline and its listeners must all stop with Serve.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
