package rewrite

import "time"

// SetClock fixes the clock Retry-After dates are read against, for tests.
func SetClock(t time.Time) func() {
	old := timeNow
	timeNow = func() time.Time { return t }
	return func() { timeNow = old }
}
