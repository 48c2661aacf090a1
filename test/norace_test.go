//go:build !race

package test

// raceEnabled reports whether the tests run with the race detector, so that
// the signpost binary under test is built with it too.
const raceEnabled = false
