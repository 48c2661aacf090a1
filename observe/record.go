package observe

import (
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/signpost-proxy/signpost/internal/lru"
	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/tidwall/gjson"
)

// Exchange is one request and the upstream's answer, as the proxy saw it.
type Exchange struct {
	Caller       uint64            // who sent it (an opaque hash); 0 is no known caller, left out of recoveries
	Route        string            // declared route name; "" when no route declares the request
	Template     string            // the declared route's path template (e.g. /tickets/{ticket_id}); "" when undeclared
	Vars         map[string]string // the declared route's path variables; nil when undeclared
	Method       string
	Path         string
	RawQuery     string
	RequestType  string // request Content-Type
	Body         []byte // request body when read (JSON object expected), nil otherwise
	Status       int    // the upstream's status
	ResponseType string // upstream Content-Type
	Response     []byte // the upstream's error body as read (decoded), or a success's that may carry one; nil when not read
	Explained    bool   // a rule of the route explains this error: not catalogued, but still counted in Requests and used for recoveries
}

// Record is what observe mode has learned so far. It is safe for
// concurrent use: Add takes one lock, briefly, and starts nothing.
type Record struct {
	mu      sync.Mutex
	o       Options
	since   time.Time
	now     time.Time // the time of the Add under way
	ops     *lru.LRU[string, *operation]
	callers *lru.LRU[uint64, caller]
	dropped Dropped
	lastID  uint64 // the last id given to an operation or an error entry
	caller  uint64 // the caller of the Add under way
	reqType string // the media type of the request under way; may alias it

	// Scratch reused by each Add, under mu.
	key    []byte      // the operation's key
	vals   []string    // the inferred path variables' values
	shape  []byte      // a value's shape
	fields []seenField // the request's fields
}

// operation is what the record keeps of one Operation.
type operation struct {
	id                  uint64
	route, method, path string
	when                *When    // the RPC method, for an endpoint's operation
	label               string   // "METHOD /path", as Error.Before names it
	vars                []string // path variable names, in order
	requests, successes int64
	fields              []*field
	byField             map[fieldKey]int32 // index in fields
	errors              *lru.LRU[errKey, errEntry]
}

type fieldKey struct{ in, name string }

// seenField is one field of the request under way.
type seenField struct {
	field int32  // index in the operation's fields
	value string // masked and cut; may alias the request
	held  bool   // takes part in recoveries: not a credential, an object or an array
}

// New returns an empty record bounded by o.
func New(o Options) *Record {
	r := &Record{o: o.withDefaults()}
	r.reset()
	return r
}

// Reset forgets everything recorded; Since becomes now.
func (r *Record) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reset()
}

func (r *Record) reset() {
	r.since = r.o.Now()
	r.dropped = Dropped{}
	r.ops = lru.New(r.o.Operations, func(string, **operation) { r.dropped.Operations++ })
	r.callers = lru.New(r.o.Callers, func(_ uint64, c *caller) {
		if c.waiting(r.now, r.o.Window) {
			r.dropped.Callers++
		}
	})
}

// Add records one exchange. It keeps nothing of x itself: what it keeps
// of x's strings, bytes and map it copies, masked and capped.
func (r *Record) Add(x *Exchange) {
	now := r.o.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = now
	r.caller = x.Caller
	r.reqType = mediaType(x.RequestType)

	op := r.operation(x)
	// A success whose body carries an error is one.
	carried := x.Status >= 200 && x.Status < 300 && x.Response != nil && (x.Explained || Carries(x.Response))
	ok := x.Status >= 200 && x.Status < 300 && !carried
	bad := x.Status >= 400 || carried
	op.requests++
	if ok {
		op.successes++
	}

	r.fields = r.fields[:0]
	if x.Route != "" {
		for _, name := range op.vars {
			if v, found := x.Vars[name]; found {
				r.observe(op, "path", name, kindString, v, ok, bad)
			}
		}
	} else {
		for i, v := range r.vals {
			r.observe(op, "path", op.vars[i], kindString, v, ok, bad)
		}
	}
	r.query(op, x.RawQuery, ok, bad)
	r.body(op, x.Body, ok, bad)

	var e *errEntry
	var k errKey
	if bad && !x.Explained {
		e, k = r.catalogue(op, x)
	}
	if x.Caller != 0 {
		switch {
		case bad:
			r.failed(op, x.Caller, e, k)
		case ok:
			r.succeeded(op, x.Caller)
		}
	}
	clear(r.vals) // hold no view of x past Add
	r.vals = r.vals[:0]
	clear(r.fields)
	r.reqType = ""
}

// mediaType returns a Content-Type's media type, without parameters and
// spaces, cut to valueBytes: application/json of "application/json; charset=utf-8".
func mediaType(ct string) string {
	ct, _, _ = strings.Cut(ct, ";")
	return cut(strings.TrimSpace(ct), valueBytes)
}

// operation returns x's operation, made the most recently seen; for an
// undeclared one, r.vals holds the values of its inferred path variables.
func (r *Record) operation(x *Exchange) *operation {
	r.vals = r.vals[:0]
	k := r.key[:0]
	if x.Route != "" {
		k = append(k, "r "...)
		k = append(k, x.Route...)
	} else {
		k = append(k, "p "...)
		k = appendUpper(k, x.Method)
		k = append(k, ' ')
		k, r.vals = inferShape(k, x.Path, r.vals)
		if w := r.rpcMethod(x); w != nil {
			k = append(k, " when "...)
			k = append(k, w.In...)
			k = append(k, ' ')
			k = append(k, w.Key...)
			k = append(k, '=')
			k = append(k, w.Equals...)
		}
	}
	r.key = k
	var op **operation
	if o, found := lru.GetBytes(r.ops, k); found {
		op = o
	} else {
		op = r.newOperation(x)
	}
	return *op
}

func (r *Record) newOperation(x *Exchange) **operation {
	op := &operation{
		id:      r.nextID(),
		route:   strings.Clone(x.Route),
		method:  strings.ToUpper(x.Method),
		byField: make(map[fieldKey]int32),
		errors:  lru.New(r.o.Errors, func(errKey, *errEntry) { r.dropped.Errors++ }),
	}
	if x.Route != "" {
		op.path = strings.Clone(x.Template)
	} else {
		op.path, _, _ = strings.Cut(string(r.key[len("p ")+len(x.Method)+1:]), " when ")
		if w := r.rpcMethod(x); w != nil {
			op.when = &When{In: w.In, Key: w.Key, Equals: strings.Clone(w.Equals)}
		}
	}
	op.method = strings.Clone(op.method)
	op.vars = templateVars(op.path)
	op.label = op.method + " " + op.path
	p := r.ops.Add(string(r.key))
	*p = op
	return p
}

func (r *Record) nextID() uint64 {
	r.lastID++
	return r.lastID
}

// appendUpper appends s in ASCII upper case.
func appendUpper(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// query observes the query parameters, the first value of each, as
// url.ParseQuery reads them.
func (r *Record) query(op *operation, q string, ok, bad bool) {
	for q != "" {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		if kv == "" || strings.Contains(kv, ";") {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || k == "" {
			continue
		}
		r.observe(op, "query", k, kindString, v, ok, bad)
	}
}

// body observes the top-level members of a JSON object body, whatever its
// declared type; any other body is left out. An object's or an array's
// kind is kept, not its value.
func (r *Record) body(op *operation, b []byte, ok, bad bool) {
	if strings.EqualFold(r.reqType, "application/x-www-form-urlencoded") {
		r.form(op, b, ok, bad)
		return
	}
	s := view(b)
	t := strings.TrimLeft(s, " \t\r\n")
	if t == "" || t[0] != '{' || !gjson.Valid(s) {
		return
	}
	gjson.Parse(t).ForEach(func(k, v gjson.Result) bool {
		var kind, val string
		switch v.Type {
		case gjson.String:
			kind, val = kindString, v.Str
		case gjson.Number:
			kind, val = kindNumber, v.Raw
		case gjson.True, gjson.False:
			kind, val = kindBoolean, v.Raw
		case gjson.JSON:
			kind = kindArray
			if v.IsObject() {
				kind = kindObject
			}
		default:
			return true // null says nothing of the field
		}
		r.observe(op, "body", k.Str, kind, val, ok, bad)
		return true
	})
}

// observe counts one value of a field of the request under way: only the
// first of the request's values of a field counts.
func (r *Record) observe(op *operation, in, name, kind, raw string, ok, bad bool) {
	i, found := op.byField[fieldKey{in, name}]
	if !found {
		if len(op.fields) >= maxFields {
			r.dropped.Values++
			return
		}
		f := newField(strings.Clone(name), in)
		i = int32(len(op.fields))
		op.fields = append(op.fields, f)
		op.byField[fieldKey{f.in, f.name}] = i
	}
	for _, s := range r.fields {
		if s.field == i {
			return
		}
	}
	f := op.fields[i]
	f.seen++
	if ok {
		f.succ++
	}
	f.kind = mergeKind(f.kind, kind)
	if f.credential || !keepable(kind) {
		r.fields = append(r.fields, seenField{field: i})
		return
	}
	v := maskValue(raw)
	r.fields = append(r.fields, seenField{field: i, value: v, held: true})
	switch {
	case ok:
		if !f.good.addBy(v, r.o.Values, r.caller) {
			f.open = true
			r.dropped.Values++
		}
		if len(raw) > valueBytes {
			// Kept cut: its shape would be the shape of a part.
			f.long++
		} else {
			r.shape = appendShape(r.shape[:0], v)
			if !f.shapes.add(view(r.shape), r.o.Values) {
				r.dropped.Values++
			}
		}
		if kind == kindString {
			m := f.formatsOf(raw)
			for j := range f.formats {
				if m&(1<<j) != 0 {
					f.formats[j]++
				}
			}
		}
	case bad:
		if !f.bad.add(v, r.o.Values) {
			r.dropped.Values++
		}
	}
}

// errKey identifies an error of an operation.
type errKey struct {
	status int
	json   string
	text   string
}

// errEntry is what the record keeps of one Error.
type errEntry struct {
	id          uint64
	contentType string
	count       int64
	first, last time.Time
	recovered   int64
	blamed      []blame
	before      counts
	sample      Sample // the first exchange that met the error
}

// catalogue counts an error no rule explains, returning its entry and key.
func (r *Record) catalogue(op *operation, x *Exchange) (*errEntry, errKey) {
	path, text := identify(x.Response, x.ResponseType)
	k := errKey{status: x.Status, json: path, text: text}
	if e, found := op.errors.Get(k); found {
		e.count++
		e.last = r.now
		return e, k
	}
	k.json, k.text = strings.Clone(k.json), strings.Clone(k.text)
	e := op.errors.Add(k)
	*e = errEntry{
		id:          r.nextID(),
		contentType: strings.Clone(x.ResponseType),
		count:       1,
		first:       r.now,
		last:        r.now,
		sample: Sample{
			Method:       redact.Clip([]byte(x.Method)),
			Path:         redact.Clip([]byte(x.Path)),
			Query:        redact.Clip([]byte(x.RawQuery)),
			RequestBody:  redact.Clip(x.Body),
			Status:       x.Status,
			ContentType:  strings.Clone(x.ResponseType),
			ResponseBody: redact.Clip(x.Response),
		},
	}
	return e, k
}

// view returns b as a string without copying it, for lookups and parsing
// during one Add: whatever the record keeps of it, it clones.
func view(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// form counts the members of a urlencoded form body, as text, under in
// form: the first value of each.
func (r *Record) form(op *operation, b []byte, ok, bad bool) {
	vs, err := url.ParseQuery(view(b))
	if err != nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(vs)) {
		if len(vs[k]) > 0 {
			r.observe(op, "form", k, kindString, vs[k][0], ok, bad)
		}
	}
}

// rpcName is what an RPC method's name may be: an identifier, dotted or
// dashed (torrent-get, aria2.addUri, supervisor.getProcessInfo).
var rpcName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.:/-]{0,63}$`)

// xmlMethodName finds an XML-RPC call's methodName.
var xmlMethodName = regexp.MustCompile(`^\s*(?:<\?xml[^>]*\?>\s*)?<methodCall>\s*<methodName>\s*([^<\s]{1,64})\s*</methodName>`)

// rpcMethod returns the method an RPC call names, when x is one: a POST
// whose JSON object body names it in a top-level "method" string, or an
// XML-RPC methodCall. The value may alias x's body.
func (r *Record) rpcMethod(x *Exchange) *When {
	if !strings.EqualFold(x.Method, "POST") || len(x.Body) == 0 {
		return nil
	}
	s := view(x.Body)
	if m := xmlMethodName.FindStringSubmatch(s); m != nil && rpcName.MatchString(m[1]) {
		return &When{In: "xml", Key: "methodCall/methodName", Equals: m[1]}
	}
	t := strings.TrimLeft(s, " \t\r\n")
	if t == "" || t[0] != '{' || !gjson.Valid(s) {
		return nil
	}
	if m := gjson.Get(s, "method"); m.Type == gjson.String && rpcName.MatchString(m.Str) {
		return &When{In: "json", Key: "method", Equals: m.Str}
	}
	return nil
}
