package observe

import (
	"strings"
	"time"
)

// caller is what the record remembers of one caller for recoveries: its
// pending errors, one per operation, and its latest successes elsewhere.
type caller struct {
	pending []pending // oldest first, at most maxPending
	recent  [maxRecent]visit
	next    int // where recent's next visit goes
}

// pending is a caller's last error on an operation, awaiting a success.
type pending struct {
	op    uint64 // the operation's id
	err   errKey // the error, if errID is not 0
	errID uint64 // the error entry's id; 0 for an error a rule explains
	at    time.Time
	held  []heldValue // the failing request's field values, in buf
	buf   []byte      // buf[:ctype] is the failing request's media type, in lower case
	ctype int32
	full  bool // held could not hold every field
}

// heldValue is one field value of a failing request: buf[start:end].
type heldValue struct {
	field      int32
	start, end int32
}

// visit is a success of the caller on an operation other than a pending one.
type visit struct {
	op    uint64
	label string
	at    time.Time
}

// waiting reports whether c has an error pending within the window.
func (c *caller) waiting(now time.Time, window time.Duration) bool {
	for i := range c.pending {
		if now.Sub(c.pending[i].at) <= window {
			return true
		}
	}
	return false
}

// failed makes the error the caller's pending one on op, holding a copy
// of the request's field values; e is nil for an error a rule explains.
func (r *Record) failed(op *operation, id uint64, e *errEntry, k errKey) {
	c, found := r.callers.Get(id)
	if !found {
		c = r.callers.Add(id)
	}
	var p *pending
	for i := range c.pending {
		if c.pending[i].op == op.id {
			p = &c.pending[i]
			break
		}
	}
	if p == nil {
		if len(c.pending) >= maxPending {
			old := c.pending[0] // the oldest: its buffers are reused
			copy(c.pending, c.pending[1:])
			c.pending[len(c.pending)-1] = old
		} else {
			c.pending = append(c.pending, pending{})
		}
		p = &c.pending[len(c.pending)-1]
	}
	p.op, p.at, p.err, p.errID = op.id, r.now, errKey{}, 0
	if e != nil {
		p.err, p.errID = k, e.id
	}
	p.held, p.buf, p.full = p.held[:0], p.buf[:0], false
	for i := 0; i < len(r.reqType); i++ {
		c := r.reqType[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		p.buf = append(p.buf, c)
	}
	p.ctype = int32(len(p.buf))
	for _, s := range r.fields {
		if !s.held {
			continue
		}
		if len(p.held) >= maxHeld || len(p.buf)+len(s.value) > maxHeldBytes {
			p.full = true
			continue
		}
		start := len(p.buf)
		p.buf = append(p.buf, s.value...)
		p.held = append(p.held, heldValue{field: s.field, start: int32(start), end: int32(len(p.buf))})
	}
}

// succeeded ends the caller's pending error on op, if any: within the
// window, it is the error's recovery. While errors are pending, the
// success is remembered, should it be what another one needed first.
func (r *Record) succeeded(op *operation, id uint64) {
	c, found := r.callers.Get(id)
	if !found {
		return
	}
	i := -1
	for j := range c.pending {
		if c.pending[j].op == op.id {
			i = j
			break
		}
	}
	if len(c.pending) > 0 {
		c.recent[c.next] = visit{op: op.id, label: op.label, at: r.now}
		c.next = (c.next + 1) % maxRecent
	}
	if i < 0 {
		return
	}
	p := &c.pending[i]
	if p.errID != 0 && r.now.Sub(p.at) <= r.o.Window {
		if e, ok := op.errors.Peek(p.err); ok && e.id == p.errID {
			e.recovered++
			r.blame(op, e, p)
			r.before(e, c, p, op.id)
		}
	}
	old := *p // keep its buffers for the next pending
	copy(c.pending[i:], c.pending[i+1:])
	c.pending[len(c.pending)-1] = old
	c.pending = c.pending[:len(c.pending)-1]
}

// blame counts each field whose value changed between the failing request
// p held and the request under way, which succeeded; a field that
// appeared or disappeared changed from or to "".
func (r *Record) blame(op *operation, e *errEntry, p *pending) {
	if from := view(p.buf[:p.ctype]); !strings.EqualFold(from, r.reqType) {
		// The body's encoding changed: its fields changed with it, for
		// want of being read, and the encoding is what mattered.
		e.blame(contentType, from, strings.ToLower(r.reqType))
	}
	for _, h := range p.held {
		from := view(p.buf[h.start:h.end])
		to, present := r.seen(h.field)
		if !present || to != from {
			e.blame(op.fields[h.field], from, to)
		}
	}
	if p.full {
		return // a field not held may have been sent: no appearance is sure
	}
outer:
	for _, s := range r.fields {
		if !s.held {
			continue
		}
		for _, h := range p.held {
			if h.field == s.field {
				continue outer
			}
		}
		e.blame(op.fields[s.field], "", s.value)
	}
}

// contentType stands for the request's Content-Type in an error's blamed
// fields: a recovery that changed it changed the body's encoding.
var contentType = &field{name: "Content-Type", in: "header"}

// seen returns the value the request under way sent for a field, if any.
func (r *Record) seen(field int32) (string, bool) {
	for _, s := range r.fields {
		if s.field == field && s.held {
			return s.value, true
		}
	}
	return "", false
}

// before counts, for the error p recovered from, each other operation the
// caller succeeded on since the error: the call that had to come first.
func (r *Record) before(e *errEntry, c *caller, p *pending, op uint64) {
	for i, v := range c.recent {
		if v.label == "" || v.op == op || v.at.Before(p.at) {
			continue
		}
		dup := false
		for _, w := range c.recent[:i] {
			if w.op == v.op && !w.at.Before(p.at) {
				dup = true
			}
		}
		if !dup {
			e.before.add(v.label, maxBefore)
		}
	}
}

// blame is what the record keeps of one Blame.
type blame struct {
	field   *field
	count   int64
	changes []Change
}

// blame counts one change of f on the way from e to a success.
func (e *errEntry) blame(f *field, from, to string) {
	var b *blame
	for i := range e.blamed {
		if e.blamed[i].field == f {
			b = &e.blamed[i]
			break
		}
	}
	if b == nil {
		if len(e.blamed) >= maxBlamed {
			return
		}
		e.blamed = append(e.blamed, blame{field: f})
		b = &e.blamed[len(e.blamed)-1]
	}
	b.count++
	for i := range b.changes {
		if b.changes[i].From == from && b.changes[i].To == to {
			b.changes[i].Count++
			return
		}
	}
	if len(b.changes) < maxChanges {
		b.changes = append(b.changes, Change{From: strings.Clone(from), To: strings.Clone(to), Count: 1})
	}
}
