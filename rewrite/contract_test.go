package rewrite_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

type contractBody struct {
	Error, Title string
	NextCall     *struct{ Call string } `json:"next_call"`
	Errors       []struct{ Field, Code, Message string }
}

func decodeContract(t *testing.T, b []byte) contractBody {
	t.Helper()
	var d contractBody
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return d
}

// TestBatchedFaultReadsTheSameWhicheverSideFoundIt: a malformed ticket_id in
// a batch reads the same whether the upstream's 400 named another field or
// its 404 named this one, as docs/response-contract.md's "Every fault at once"
// says; a rule with a message of its own lends neither code nor message to
// the batch.
func TestBatchedFaultReadsTheSameWhicheverSideFoundIt(t *testing.T) {
	cfg := loadRules(t)
	entryFor := func(status int, upBody string) (string, string) {
		rt, req := route(t, cfg, "PATCH", "/tickets/8841") // ticket_id breaks ^T-[0-9]+$
		req.Body = []byte(`{"status":"OPEN"}`)
		up := &rewrite.Upstream{Status: status, Header: http.Header{}, Body: &rules.Body{Raw: []byte(upBody)}}
		d := decodeContract(t, new(rewrite.Error).SetMatch(rt, rt.MatchError(status, up.Body), up, req, cfg.Limits).JSON())
		for _, e := range d.Errors {
			if e.Field == "ticket_id" {
				return e.Code, e.Message
			}
		}
		t.Fatalf("no ticket_id entry in %+v", d)
		return "", ""
	}
	c1, m1 := entryFor(400, `{"error":"Invalid status"}`) // signpost found ticket_id
	c2, m2 := entryFor(404, `{"error":"No such ticket"}`) // upstream found ticket_id
	if c1 != c2 || m1 != m2 {
		t.Errorf("same ticket_id fault reads differently: %q %q vs %q %q", c1, m1, c2, m2)
	}
}

// TestAliasesAlikeButForCaseAnswerTheSameOnEveryLoad: of two aliases that
// differ only in case, the one that sorts first wins, on every load, as in
// suggest.NewSet.
func TestAliasesAlikeButForCaseAnswerTheSameOnEveryLoad(t *testing.T) {
	y := `
routes:
  r:
    method: POST
    path: /x
    fields:
      priority: {enum: [p1, p2, p3], aliases: {High: p1, HIGH: p2}}
    errors:
      - match: {status: 400, json: error, equals: bad}
        code: bad_priority
        field: priority
`
	seen := map[string]bool{}
	for range 40 {
		cfg, err := rules.Parse("x.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		rt := cfg.Routes[0]
		up := &rewrite.Upstream{Status: 400, Header: http.Header{}, Body: &rules.Body{Raw: []byte(`{"error":"bad"}`)}}
		e := new(rewrite.Error).SetMatch(rt, rt.MatchError(400, up.Body), up, &rewrite.Request{Body: []byte(`{"priority":"high"}`)}, cfg.Limits)
		seen[string(e.JSON())] = true
	}
	if len(seen) > 1 {
		t.Errorf("did_you_mean differs between loads of one rule file: %v", seen)
	}
}

// TestWrapQuotesNoClassNameOrGroupedNumber: an exception's class name, a
// token of 16 characters or more with a digit in any script, and a card
// number written in groups stay out of upstream_message, as
// docs/response-contract.md's "Errors no rule explains" says.
func TestWrapQuotesNoClassNameOrGroupedNumber(t *testing.T) {
	for _, s := range []string{
		"NumberFormatException: For input string",
		"IllegalArgumentException: name must not be blank",
		"token ١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦ is invalid", // 16 Arabic-Indic digits
		"Card 4111 1111 1111 1111 was declined",
	} {
		up := &rewrite.Upstream{Status: 400, Header: http.Header{"Content-Type": {"text/plain"}}, Body: &rules.Body{Raw: []byte(s)}}
		if got := rewrite.Wrap(up, nil, nil).UpstreamMessage; got != "" {
			t.Errorf("upstream_message quotes %q", got)
		}
	}
}

// TestBeforeNamesTheLookupInNextCall: a single fault answered before the
// upstream, on a field with a lookup, names the lookup in next_call, as it
// does after the upstream.
func TestBeforeNamesTheLookupInNextCall(t *testing.T) {
	cfg := loadRules(t)
	rt, req := route(t, cfg, "POST", "/tickets")
	req.Body = []byte(`{"title":"x","status":"open","priority":"p1","customer_id":"acme-corp"}`)
	b := rewrite.Before(rt, req, cfg.Limits).JSON()
	if d := decodeContract(t, b); d.NextCall == nil || d.NextCall.Call != "search_customers" {
		t.Errorf("no next_call for a lookup field: %s", b)
	}
}

// TestProblemTitleForAStatusWithoutAPhrase: RFC 9457 asks for a summary in
// title; a status with no reason phrase gets its class's.
func TestProblemTitleForAStatusWithoutAPhrase(t *testing.T) {
	for _, s := range []int{499, 520} {
		b := rewrite.Wrap(&rewrite.Upstream{Status: s, Header: http.Header{}}, nil, nil).ProblemJSON()
		if decodeContract(t, b).Title == "" {
			t.Errorf("empty title: %s", b)
		}
	}
}

// TestNullFillsNoCallArgument: a lookup field sent as null names no
// next_call with a null argument, which the call it names would refuse.
func TestNullFillsNoCallArgument(t *testing.T) {
	cfg := loadRules(t)
	rt, req := route(t, cfg, "POST", "/tickets")
	req.Body = []byte(`{"title":"x","status":"open","priority":"p1","customer_id":null}`)
	up := &rewrite.Upstream{Status: 404, Header: http.Header{}, Body: &rules.Body{Raw: []byte(`{"error":"No such customer"}`)}}
	rule := rt.MatchError(404, up.Body)
	if rule == nil {
		t.Fatal("no rule matched the 404")
	}
	b := new(rewrite.Error).SetMatch(rt, rule, up, req, cfg.Limits).JSON()
	if d := decodeContract(t, b); d.NextCall != nil {
		t.Errorf("next_call for a customer_id sent as null: %s", b)
	}
}
