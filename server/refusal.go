package server

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/signpost-proxy/signpost/internal/front"
	"github.com/signpost-proxy/signpost/internal/redact"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/tidwall/gjson"
)

// maxRefusedValue bounds, in characters, the value a refusal echoes and
// logs.
const maxRefusedValue = 64

// refuser answers the 400s the front answers itself for a malformed head,
// naming the field, the value it held and the rule, in the format of the
// rule file in force at the refusal; and counts and logs each one, since
// no route or rule ever sees such a request.
type refuser struct {
	// format is the body format of the rule file in force now.
	format  func() rules.BodyFormat
	metrics *metrics.Metrics
	log     *slog.Logger
}

// refuse is the front's Refusal. The value the caller sent is masked as
// any echo of a request value is, then cut to 64 characters and escaped:
// the log line shows it as the body does, escapes included, so that
// neither holds a raw control byte.
func (f *refuser) refuse(r front.Refused) (string, []byte) {
	e := rewrite.Failure(http.StatusBadRequest, r.Code, r.Rule, false)
	e.Field = r.Field
	e.Received = rewrite.Received(gjson.Result{Type: gjson.String, Str: maskRefused(r.Field, r.Value)}, maxRefusedValue)
	if f.metrics != nil {
		f.metrics.Refused(r.Code)
	}
	// The echo is a JSON string; its text, escapes kept, is what is
	// logged, since a log handler may write some control bytes (DEL) and
	// invisible code points as they are.
	echoed := string(e.Received[1 : len(e.Received)-1])
	f.log.Warn("refused a malformed request", "code", r.Code, "field", r.Field,
		"received", echoed, "remote_addr", r.Remote, "rule", r.Rule)
	if f.format() == rules.FormatProblem {
		return rewrite.ProblemContentType, e.ProblemJSON()
	}
	return rewrite.ContentType, e.JSON()
}

// maskRefused masks the credential a refused value may carry, as every
// echo and log line masks one: the whole value of a field named like a
// credential (Authorization, Cookie, X-Api-Key), keeping its scheme, the
// same in a field line refused whole, and a secret of a known shape in
// any other value or line.
func maskRefused(field, value string) string {
	if redact.CredentialName(field) {
		return redact.Credential(value)
	}
	if field == "header-line" {
		if name, v, ok := strings.Cut(value, ":"); ok && redact.CredentialName(name) {
			return name + ": " + redact.Credential(v)
		}
	}
	return redact.String(value)
}
