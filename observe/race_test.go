//go:build race

package observe

// raceEnabled reports whether the tests run with the race detector, which
// makes the memory test feed fewer errors to stay quick.
const raceEnabled = true
