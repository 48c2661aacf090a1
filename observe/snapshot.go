package observe

import (
	"cmp"
	"slices"
)

// Document returns a snapshot of the record: operations by method and
// path, errors most frequent first, values most frequent first, each tie
// broken by the text so that the same record always reads the same.
func (r *Record) Document() Document {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := Document{
		Version:        DocumentVersion,
		Since:          r.since,
		RecoveryWindow: r.o.Window.String(),
		Operations:     make([]Operation, 0, r.ops.Len()),
		Dropped:        r.dropped,
	}
	r.ops.Each(func(_ string, op **operation) {
		d.Operations = append(d.Operations, (*op).document())
	})
	slices.SortFunc(d.Operations, compareOperations)
	return d
}

func (op *operation) document() Operation {
	o := Operation{
		Route:     op.route,
		Method:    op.method,
		Path:      op.path,
		When:      op.when,
		Requests:  op.requests,
		Successes: op.successes,
		Fields:    make([]Field, 0, len(op.fields)),
		Errors:    make([]Error, 0, op.errors.Len()),
	}
	for _, f := range op.fields {
		o.Fields = append(o.Fields, f.document())
	}
	op.errors.Each(func(k errKey, e *errEntry) {
		o.Errors = append(o.Errors, e.document(k))
	})
	slices.SortFunc(o.Errors, compareErrors)
	return o
}

func (f *field) document() Field {
	d := Field{
		Name:       f.name,
		In:         f.in,
		Kind:       f.kind,
		Seen:       f.seen,
		Succeeded:  f.succ,
		Credential: f.credential,
		Good:       f.good.sorted(),
		Bad:        f.bad.sorted(),
		Open:       f.open,
		Long:       f.long,
		Shapes:     f.shapes.sorted(),
	}
	for i, n := range f.formats {
		if n > 0 {
			if d.Formats == nil {
				d.Formats = make(map[string]int64)
			}
			d.Formats[formatNames[i]] = n
		}
	}
	return d
}

func (e *errEntry) document(k errKey) Error {
	d := Error{
		Status:      k.status,
		JSON:        k.json,
		Text:        k.text,
		ContentType: e.contentType,
		Count:       e.count,
		FirstSeen:   e.first,
		LastSeen:    e.last,
		Recovered:   e.recovered,
		Before:      e.before.sorted(),
		Sample:      e.sample,
	}
	for _, b := range e.blamed {
		changes := slices.Clone(b.changes)
		slices.SortFunc(changes, compareChanges)
		d.Blamed = append(d.Blamed, Blame{Field: b.field.name, In: b.field.in, Count: b.count, Changes: changes})
	}
	slices.SortFunc(d.Blamed, compareBlames)
	return d
}

// The orders of a Document, each total on the entries one list may hold,
// so that the same record always reads the same.

// compareOperations orders operations by method, then path, then route.
func compareOperations(a, b Operation) int {
	return cmp.Or(cmp.Compare(a.Method, b.Method), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Route, b.Route))
}

// compareErrors orders errors most frequent first, then by status, text
// and JSON path.
func compareErrors(a, b Error) int {
	return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Status, b.Status), cmp.Compare(a.Text, b.Text), cmp.Compare(a.JSON, b.JSON))
}

// compareBlames orders blamed fields most often blamed first, then by name
// and place.
func compareBlames(a, b Blame) int {
	return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Field, b.Field), cmp.Compare(a.In, b.In))
}

// compareChanges orders changes most frequent first, then by the failing
// value and the value that succeeded.
func compareChanges(a, b Change) int {
	return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
}

// sortValues orders values most frequent first, then by value.
func sortValues(vs []Value) {
	slices.SortFunc(vs, func(a, b Value) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
	})
}
