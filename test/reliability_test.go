package test

import (
	"flag"
	"testing"
)

// long runs the reliability cases at the size test/reliability/run.sh
// reports: more requests, longer loads, bigger inputs. Without it each case
// runs a short version that go test ./... can afford, with the same bars.
var long = flag.Bool("reliability.long", false, "run the reliability cases at full size")

// figure records one measured figure of a reliability case and whether it
// meets its bar. Each is one log line, `FIGURE<TAB>case<TAB>figure<TAB>
// value<TAB>bar<TAB>met|NOT MET`, which test/reliability/run.sh gathers
// into its table; a figure that misses its bar fails the test.
func figure(t *testing.T, name, what string, value any, bar string, met bool) {
	t.Helper()
	verdict := "met"
	if !met {
		verdict = "NOT MET"
		t.Errorf("%s: %s = %v; the bar is %s", name, what, value, bar)
	}
	t.Logf("FIGURE\t%s\t%s\t%v\t%s\t%s", name, what, value, bar, verdict)
}

// sized returns full when the cases run long, short otherwise.
func sized[T any](short, full T) T {
	if *long {
		return full
	}
	return short
}
