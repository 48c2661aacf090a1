package observe

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// MergeError is why Merge refused its documents.
type MergeError struct {
	// Doc is the index, among Merge's arguments, of the document refused.
	Doc int
	// With is the index of the document Doc conflicts with, or -1 when
	// Doc is refused on its own.
	With int
	msg  string
}

func (e *MergeError) Error() string { return e.msg }

// Merge returns one document as if one record had seen the traffic of all
// of docs, such as the documents of several replicas each observing its
// share: operations are matched by method and path, their fields by name
// and place, their errors by status, JSON path and text; counts are
// summed, then ordered and bounded as a record orders and bounds them,
// and what the bounds leave out is counted in Dropped.
//
// The result does not depend on the order of docs: where one document's
// word is taken over another's (a route's name, an error's content type,
// the order fields were first seen in), the document that began observing
// first speaks first. Merging one document returns it unchanged.
//
// Every document must be of DocumentVersion and observed with the same
// recovery window; else Merge returns a *MergeError naming the first
// document at fault.
func Merge(docs ...Document) (Document, error) {
	if len(docs) == 0 {
		return Document{}, errors.New("no documents to merge")
	}
	for i, d := range docs {
		if d.Version != DocumentVersion {
			return Document{}, &MergeError{Doc: i, With: -1, msg: fmt.Sprintf(
				"document %d has version %d; documents of version %d merge, from GET /draft of the same release", i+1, d.Version, DocumentVersion)}
		}
	}
	for i, d := range docs {
		if d.RecoveryWindow != docs[0].RecoveryWindow {
			return Document{}, &MergeError{Doc: i, With: 0, msg: fmt.Sprintf(
				"documents observed with different recovery windows: %s and %s; draft them apart or align learn.recovery_window",
				windowText(docs[0].RecoveryWindow), windowText(d.RecoveryWindow))}
		}
	}

	m := merger{ops: make(map[opKey]*opMerge)}
	out := Document{Version: DocumentVersion, RecoveryWindow: docs[0].RecoveryWindow}
	for _, d := range inOrder(docs) {
		out.Since = earliest(out.Since, d.Since)
		out.Dropped.Operations += d.Dropped.Operations
		out.Dropped.Errors += d.Dropped.Errors
		out.Dropped.Values += d.Dropped.Values
		out.Dropped.Callers += d.Dropped.Callers
		for i := range d.Operations {
			m.operation(&d.Operations[i])
		}
	}

	out.Operations = make([]Operation, 0, len(m.list))
	for _, op := range m.list {
		out.Operations = append(out.Operations, op.document(&out.Dropped))
	}
	// Past the bound, the record forgets the least recently seen
	// operation; a document says nothing of when an operation was last
	// seen, so the least requested go first.
	if len(out.Operations) > defaultOperations {
		slices.SortFunc(out.Operations, func(a, b Operation) int {
			return cmp.Or(cmp.Compare(b.Requests, a.Requests), compareOperations(a, b))
		})
		out.Dropped.Operations += int64(len(out.Operations) - defaultOperations)
		out.Operations = out.Operations[:defaultOperations]
	}
	slices.SortFunc(out.Operations, compareOperations)
	return out, nil
}

func windowText(w string) string { return cmp.Or(w, "none") }

// inOrder returns docs in the order they began observing, those that
// began at the same time in the order of their JSON text: an order that
// does not depend on the order of the arguments.
func inOrder(docs []Document) []*Document {
	out := make([]*Document, len(docs))
	text := make(map[*Document][]byte, len(docs))
	for i := range docs {
		out[i] = &docs[i]
	}
	if len(out) == 1 {
		return out
	}
	for _, d := range out {
		text[d], _ = json.Marshal(d) // a document decoded from JSON always encodes
	}
	slices.SortStableFunc(out, func(a, b *Document) int {
		return cmp.Or(a.Since.Compare(b.Since), bytes.Compare(text[a], text[b]))
	})
	return out
}

// earliest returns the earlier of two times, a zero time standing for an
// unknown one.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// merger gathers the operations of the documents, in the order Merge
// reads them.
type merger struct {
	ops  map[opKey]*opMerge
	list []*opMerge
}

type opKey struct {
	method, path string
	when         When
}

// opMerge is one operation of the merged document in the making.
type opMerge struct {
	op      Operation // without its fields and errors
	fields  []*fieldMerge
	byField map[fieldKey]*fieldMerge
	errors  map[errKey]*errMerge
}

type fieldMerge struct {
	f                 Field // without its values and formats
	good, bad, shapes map[string]int64
	formats           map[string]int64
	// callers of each good value, summed up to the record's count of
	// them: as if each caller stayed on one replica, as recoveries assume.
	callers map[string]int64
}

type errMerge struct {
	e      Error // without its blamed fields and prerequisites
	blamed map[fieldKey]*blameMerge
	before map[string]int64
}

type blameMerge struct {
	count   int64
	changes map[[2]string]int64 // by from and to
}

func (m *merger) operation(op *Operation) {
	k := opKey{method: op.Method, path: op.Path}
	if op.When != nil {
		k.when = *op.When
	}
	o := m.ops[k]
	if o == nil {
		o = &opMerge{
			op:      Operation{Method: op.Method, Path: op.Path, When: op.When},
			byField: make(map[fieldKey]*fieldMerge),
			errors:  make(map[errKey]*errMerge),
		}
		m.ops[k] = o
		m.list = append(m.list, o)
	}
	o.op.Route = cmp.Or(o.op.Route, op.Route)
	o.op.Requests += op.Requests
	o.op.Successes += op.Successes
	for i := range op.Fields {
		o.field(&op.Fields[i])
	}
	for i := range op.Errors {
		o.error(&op.Errors[i])
	}
}

func (o *opMerge) field(f *Field) {
	k := fieldKey{f.In, f.Name}
	m := o.byField[k]
	if m == nil {
		m = &fieldMerge{
			f:       Field{Name: f.Name, In: f.In},
			good:    make(map[string]int64),
			bad:     make(map[string]int64),
			shapes:  make(map[string]int64),
			formats: make(map[string]int64),
			callers: make(map[string]int64),
		}
		o.byField[k] = m
		o.fields = append(o.fields, m)
	}
	if f.Kind != "" {
		m.f.Kind = mergeKind(m.f.Kind, f.Kind)
	}
	m.f.Seen += f.Seen
	m.f.Succeeded += f.Succeeded
	m.f.Credential = m.f.Credential || f.Credential
	m.f.Open = m.f.Open || f.Open
	m.f.Long += f.Long
	addValues(m.good, f.Good)
	for _, v := range f.Good {
		m.callers[v.Value] = min(m.callers[v.Value]+v.Callers, maxValueCallers)
	}
	addValues(m.bad, f.Bad)
	addValues(m.shapes, f.Shapes)
	for name, n := range f.Formats {
		m.formats[name] += n
	}
}

func (o *opMerge) error(e *Error) {
	k := errKey{status: e.Status, json: e.JSON, text: e.Text}
	m := o.errors[k]
	if m == nil {
		m = &errMerge{
			e:      Error{Status: e.Status, JSON: e.JSON, Text: e.Text, FirstSeen: e.FirstSeen, Sample: e.Sample},
			blamed: make(map[fieldKey]*blameMerge),
			before: make(map[string]int64),
		}
		o.errors[k] = m
	} else if !e.FirstSeen.IsZero() && (m.e.FirstSeen.IsZero() || e.FirstSeen.Before(m.e.FirstSeen)) {
		m.e.FirstSeen, m.e.Sample = e.FirstSeen, e.Sample
	}
	m.e.ContentType = cmp.Or(m.e.ContentType, e.ContentType)
	m.e.Count += e.Count
	m.e.Recovered += e.Recovered
	if e.LastSeen.After(m.e.LastSeen) {
		m.e.LastSeen = e.LastSeen
	}
	for _, b := range e.Blamed {
		bk := fieldKey{b.In, b.Field}
		bm := m.blamed[bk]
		if bm == nil {
			bm = &blameMerge{changes: make(map[[2]string]int64)}
			m.blamed[bk] = bm
		}
		bm.count += b.Count
		for _, c := range b.Changes {
			bm.changes[[2]string{c.From, c.To}] += c.Count
		}
	}
	addValues(m.before, e.Before)
}

func addValues(to map[string]int64, vs []Value) {
	for _, v := range vs {
		to[v.Value] += v.Count
	}
}

// document returns the merged operation, ordered and bounded as the
// record's, counting what the bounds leave out in dropped.
func (o *opMerge) document(dropped *Dropped) Operation {
	op := o.op
	op.Fields = make([]Field, 0, min(len(o.fields), maxFields))
	secret := make(map[fieldKey]bool)
	for i, m := range o.fields {
		if m.f.Credential {
			secret[fieldKey{m.f.In, m.f.Name}] = true
		}
		if i >= maxFields {
			// The record counts each value of a field past the bound.
			dropped.Values += m.f.Seen
			continue
		}
		op.Fields = append(op.Fields, m.document(dropped))
	}

	op.Errors = make([]Error, 0, len(o.errors))
	for _, m := range o.errors {
		op.Errors = append(op.Errors, m.document(secret))
	}
	// Past the bound, the record forgets the least recently seen error.
	if len(op.Errors) > defaultErrors {
		slices.SortFunc(op.Errors, func(a, b Error) int {
			return cmp.Or(b.LastSeen.Compare(a.LastSeen), compareErrors(a, b))
		})
		dropped.Errors += int64(len(op.Errors) - defaultErrors)
		op.Errors = op.Errors[:defaultErrors]
	}
	slices.SortFunc(op.Errors, compareErrors)
	return op
}

func (m *fieldMerge) document(dropped *Dropped) Field {
	f := m.f
	if f.Credential {
		// A credential's values are never kept, whichever document kept them.
		f.Open = false
		return f
	}
	var n int64
	f.Good, n = boundValues(m.good, defaultValues)
	for i := range f.Good {
		f.Good[i].Callers = m.callers[f.Good[i].Value]
	}
	if n > 0 {
		f.Open = true
	}
	dropped.Values += n
	f.Bad, n = boundValues(m.bad, defaultValues)
	dropped.Values += n
	f.Shapes, n = boundValues(m.shapes, defaultValues)
	dropped.Values += n
	for name, c := range m.formats {
		if c > 0 {
			if f.Formats == nil {
				f.Formats = make(map[string]int64)
			}
			f.Formats[name] = c
		}
	}
	return f
}

// document returns the merged error; secret names the operation's
// credential fields, whose changes are never kept.
func (m *errMerge) document(secret map[fieldKey]bool) Error {
	e := m.e
	for k, b := range m.blamed {
		if secret[k] {
			continue
		}
		changes := make([]Change, 0, len(b.changes))
		for c, n := range b.changes {
			changes = append(changes, Change{From: c[0], To: c[1], Count: n})
		}
		slices.SortFunc(changes, compareChanges)
		if len(changes) == 0 {
			changes = nil
		}
		e.Blamed = append(e.Blamed, Blame{Field: k.name, In: k.in, Count: b.count, Changes: changes[:min(len(changes), maxChanges)]})
	}
	slices.SortFunc(e.Blamed, compareBlames)
	e.Blamed = e.Blamed[:min(len(e.Blamed), maxBlamed)]
	e.Before, _ = boundValues(m.before, maxBefore)
	return e
}

// boundValues returns the values of counts ordered as a Document orders
// them and cut to max, and how many times the values cut were seen: the
// record counts each in Dropped.Values.
func boundValues(counts map[string]int64, max int) ([]Value, int64) {
	if len(counts) == 0 {
		return nil, 0
	}
	vs := make([]Value, 0, len(counts))
	for v, n := range counts {
		vs = append(vs, Value{Value: v, Count: n})
	}
	sortValues(vs)
	var dropped int64
	for _, v := range vs[min(len(vs), max):] {
		dropped += v.Count
	}
	return vs[:min(len(vs), max)], dropped
}
