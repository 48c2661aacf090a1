// Package observe records what observe mode learns of an API from its
// traffic, before any rule is enforced: per operation, the values callers
// send, the upstream errors no rule explains, and what callers changed to
// get past them. signpost draft turns the Document it serves into rules.
//
// A Record is bounded by its Options whatever the traffic: operations,
// errors, values and callers each live in a bounded table that forgets the
// least recently seen first and counts what it forgot.
package observe

import "time"

// Options bound the record. Zero values mean the defaults in parentheses.
type Options struct {
	Operations int              // operations kept (256), least recently seen forgotten first
	Errors     int              // error entries per operation (32), least recently seen forgotten
	Values     int              // distinct good and bad values kept per field (32 each)
	Callers    int              // callers remembered for recoveries (10000), LRU
	Window     time.Duration    // recovery window (10 minutes)
	Now        func() time.Time // for tests; nil is time.Now
}

// The defaults of Options, which its field comments name.
const (
	defaultOperations = 256
	defaultErrors     = 32
	defaultValues     = 32
	defaultCallers    = 10000
	defaultWindow     = 10 * time.Minute
)

// Bounds that Options do not name: they keep one request, one error entry
// and one caller's memory small.
const (
	maxFields    = 64   // fields per operation; more are counted in Dropped.Values
	maxBlamed    = 16   // blamed fields per error
	maxChanges   = 16   // changes per blamed field
	maxBefore    = 16   // prerequisite operations per error
	maxPending   = 4    // operations with an error pending, per caller
	maxRecent    = 4    // other operations' successes remembered, per caller
	maxHeld      = 32   // field values held with a pending error
	maxHeldBytes = 1024 // bytes of values held with a pending error
	valueBytes   = 64   // a value is cut to this many bytes; a longer one feeds no shape
	wholeBytes   = 1024 // a value up to this long is checked whole against the formats; a longer one against none
	textBytes    = 200  // an error's text is cut to this many bytes
	maskWindow   = 512  // bytes masked before a value or text is cut, so a secret across the cut is masked whole
)

// withDefaults returns o with its zero values replaced by the defaults.
func (o Options) withDefaults() Options {
	if o.Operations <= 0 {
		o.Operations = defaultOperations
	}
	if o.Errors <= 0 {
		o.Errors = defaultErrors
	}
	if o.Values <= 0 {
		o.Values = defaultValues
	}
	if o.Callers <= 0 {
		o.Callers = defaultCallers
	}
	if o.Window <= 0 {
		o.Window = defaultWindow
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
