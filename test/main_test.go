package test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// binary is the signpost executable TestMain builds for every test.
var binary string

// ticketsConfig is the rule file the project ships, relative to test/.
const ticketsConfig = "../configs/tickets.yaml"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "signpost-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot make a directory for the binary:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "signpost")
	if err := build(binary); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return m.Run()
}

// build compiles ./cmd/signpost from the module root into out, with the
// race detector when the tests themselves run with it.
func build(out string) error {
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/signpost")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %v: %v\n%s", args, err, b)
	}
	return nil
}
