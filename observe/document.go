package observe

import "time"

// DocumentVersion is the version of the Document format this package
// writes and signpost draft reads.
const DocumentVersion = 1

// Document is what observe mode learned of an API, as the admin listener
// serves it (GET /draft) and signpost draft reads it: per operation, the
// values callers sent, the errors no rule explained, and what callers
// changed to get past them. Every value in it is masked as the logs mask
// them and capped; a credential's value is never kept.
type Document struct {
	Version int `json:"version"`
	// Since is when observing began: the process start, or the last time
	// the record was cleared.
	Since time.Time `json:"since"`
	// RecoveryWindow is how long after an error a success of the same
	// caller on the same operation counts as its recovery, e.g. "10m0s".
	RecoveryWindow string      `json:"recovery_window"`
	Operations     []Operation `json:"operations"`
	// Dropped is what the bounds made the record forget.
	Dropped Dropped `json:"dropped"`
}

// Dropped counts what the record's bounds forgot or never kept.
type Dropped struct {
	// Operations forgotten past the bound on operations, least recently
	// seen first.
	Operations int64 `json:"operations"`
	// Errors are error entries forgotten past an operation's bound, least
	// recently seen first.
	Errors int64 `json:"errors"`
	// Values are distinct values not kept past a field's bound.
	Values int64 `json:"values"`
	// Callers are callers forgotten with a recovery still pending.
	Callers int64 `json:"callers"`
}

// Operation is one method on one path template: a route of the rule file
// when one declares the requests, else a template inferred from the paths
// seen, such as /tickets/{ticket_id} from /tickets/T-1041 and /tickets/T-88.
type Operation struct {
	// Route names the declared route; empty for an inferred operation.
	Route  string `json:"route,omitempty"`
	Method string `json:"method"`
	Path   string `json:"path"`
	// When, for one operation of an RPC endpoint, is the body member that
	// names it: the endpoint's calls of each method are an operation.
	When *When `json:"when,omitempty"`
	// Requests answered, and of them those the upstream answered with a
	// 2xx status.
	Requests  int64 `json:"requests"`
	Successes int64 `json:"successes"`
	// Fields are the values callers sent: the path's variables, the query
	// parameters, and the top-level members of a JSON object body, in the
	// order first seen.
	Fields []Field `json:"fields"`
	// Errors are the upstream errors no rule of the route explains, most
	// frequent first.
	Errors []Error `json:"errors"`
}

// Field is one value callers send to an operation.
type Field struct {
	Name string `json:"name"`
	// In is where the value lives: "path", "query" or "body".
	In string `json:"in"`
	// Kind is the JSON type of the values seen: "string", "number",
	// "boolean", "object", "array", or "mixed"; path and query values are
	// strings. An object's or an array's values are not kept, only its kind.
	Kind string `json:"kind"`
	// Seen counts requests that carried the field, and Succeeded those
	// of them that succeeded.
	Seen      int64 `json:"seen"`
	Succeeded int64 `json:"succeeded"`
	// Credential is set when the field's name says it holds a secret: its
	// values are never kept.
	Credential bool `json:"credential,omitempty"`
	// Values sent in successful requests and in failed ones, most
	// frequent first, up to a bound; Open is set when the successful
	// values outgrew the bound, so they are no closed set.
	Good []Value `json:"good,omitempty"`
	Bad  []Value `json:"bad,omitempty"`
	Open bool    `json:"open,omitempty"`
	// Long counts the successful values longer than 64 bytes: Good keeps
	// them cut, so no shape is counted for them and none should feed an
	// enum, a pattern or an example.
	Long int64 `json:"long,omitempty"`
	// Formats counts the successful values that parse as each named
	// format of the rule file ("date", "rfc3339-utc", "uuid", "email",
	// "integer", "rfc3339"), each checked whole up to 1 KiB, and Shapes the successful values by shape: each run of
	// digits read as "0", e.g. T-1041 and T-88 are both "T-0".
	Formats map[string]int64 `json:"formats,omitempty"`
	Shapes  []Value          `json:"shapes,omitempty"`
}

// Value is one value, or one shape, and how often it was seen.
type Value struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
	// Callers counts, for a field's successful values, the distinct known
	// callers that sent it, up to 3: a closed set is sent by many callers,
	// a caller's own name by one.
	Callers int64 `json:"callers,omitempty"`
}

// Error is one kind of upstream error no rule explains: its status and the
// part of its body that identifies it.
type Error struct {
	Status int `json:"status"`
	// JSON is the gjson path of the body member that names the error, e.g.
	// "error" or "error.message", and Text that member's text; for a body
	// that is not JSON, JSON is empty and Text is what identifies the body
	// (an HTML page's title, else its first line), in either case cut to
	// 200 bytes.
	JSON        string    `json:"json,omitempty"`
	Text        string    `json:"text"`
	ContentType string    `json:"content_type,omitempty"`
	Count       int64     `json:"count"`
	FirstSeen   time.Time `json:"first_seen"`
	LastSeen    time.Time `json:"last_seen"`
	// Recovered counts the errors followed, within the recovery window, by
	// a success of the same caller on the same operation.
	Recovered int64 `json:"recovered"`
	// Blamed are the fields that changed between a failing request and
	// the same caller's next success, most often blamed first.
	Blamed []Blame `json:"blamed,omitempty"`
	// Before counts the errors that a success of the same caller on
	// another operation, Before's key "METHOD /path", preceded within the
	// window and that then succeeded when repeated: the call that had to
	// come first. Bounded like Blamed.
	Before []Value `json:"before,omitempty"`
	// Sample is the first request that met the error, and its response.
	Sample Sample `json:"sample"`
}

// Blame is a field that changed on the way from an error to a success.
type Blame struct {
	Field string `json:"field"`
	In    string `json:"in"`
	// Count is how many recoveries changed the field.
	Count int64 `json:"count"`
	// Changes are the value sent with the error and the value that
	// succeeded, most frequent first; "" stands for a field not sent.
	Changes []Change `json:"changes,omitempty"`
}

// Change is one failing value and the value that succeeded after it.
type Change struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int64  `json:"count"`
}

// Sample is one exchange, masked and capped as the logs are.
type Sample struct {
	Method       string `json:"method"`
	Path         string `json:"path"`
	Query        string `json:"query,omitempty"`
	RequestBody  string `json:"request_body,omitempty"`
	Status       int    `json:"status"`
	ContentType  string `json:"content_type,omitempty"`
	ResponseBody string `json:"response_body"`
}

// When is the body member, and its value, by which an RPC endpoint's calls
// of one method are told from the others: {"in":"json","key":"method",
// "equals":"torrent-get"}.
type When struct {
	In     string `json:"in"` // "json" or "xml"
	Key    string `json:"key"`
	Equals string `json:"equals"`
}
