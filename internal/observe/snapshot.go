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
		Operations:     make([]Operation, 0, r.ops.len()),
		Dropped:        r.dropped,
	}
	r.ops.each(func(_ string, op **operation) {
		d.Operations = append(d.Operations, (*op).document())
	})
	slices.SortFunc(d.Operations, func(a, b Operation) int {
		return cmp.Or(cmp.Compare(a.Method, b.Method), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Route, b.Route))
	})
	return d
}

func (op *operation) document() Operation {
	o := Operation{
		Route:     op.route,
		Method:    op.method,
		Path:      op.path,
		Requests:  op.requests,
		Successes: op.successes,
		Fields:    make([]Field, 0, len(op.fields)),
		Errors:    make([]Error, 0, op.errors.len()),
	}
	for _, f := range op.fields {
		o.Fields = append(o.Fields, f.document())
	}
	op.errors.each(func(k errKey, e *errEntry) {
		o.Errors = append(o.Errors, e.document(k))
	})
	slices.SortFunc(o.Errors, func(a, b Error) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Status, b.Status), cmp.Compare(a.Text, b.Text), cmp.Compare(a.JSON, b.JSON))
	})
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
		slices.SortFunc(changes, func(x, y Change) int {
			return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.From, y.From), cmp.Compare(x.To, y.To))
		})
		d.Blamed = append(d.Blamed, Blame{Field: b.field.name, In: b.field.in, Count: b.count, Changes: changes})
	}
	slices.SortFunc(d.Blamed, func(x, y Blame) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Field, y.Field), cmp.Compare(x.In, y.In))
	})
	return d
}

// sortValues orders values most frequent first, then by value.
func sortValues(vs []Value) {
	slices.SortFunc(vs, func(a, b Value) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
	})
}
