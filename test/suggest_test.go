package test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// addressesConfig is the shipped rule file for the address book API; its
// country_code takes the 249 codes of configs/catalogs/iso3166-alpha2.yaml.
const addressesConfig = "../configs/addresses.yaml"

// knownCountries are the codes the address book API accepts, exactly as
// written: a few real ones, and XK, which the catalog holds as hidden.
var knownCountries = []string{"GB", "DE", "US", "FR", "ES", "XK"}

// address is the body of POST /addresses.
type address struct {
	Street      string `json:"street,omitempty"`
	City        string `json:"city,omitempty"`
	CountryCode string `json:"country_code,omitempty"`
	Kind        string `json:"kind,omitempty"`
}

func (a address) JSON() []byte {
	b, err := json.Marshal(a)
	if err != nil {
		panic(err)
	}
	return b
}

// addressAPI is an address book API that, like the ticket API, answers a
// mistake with a bare string: 400 {"error":"Unknown country code"} for a
// code it does not know, 400 {"error":"Missing city"}, else 201 with the
// address as stored.
func addressAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != "/addresses" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"Not found"}`))
			return
		}
		var in address
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"Bad request"}`))
			return
		}
		switch {
		case !slices.Contains(knownCountries, in.CountryCode):
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"Unknown country code"}`))
		case in.City == "":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"Missing city"}`))
		default:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(in.JSON())
		}
	})
}

// postAddress sends POST /addresses with a in front of sp, with header pairs.
func postAddress(t *testing.T, sp *signpost, a address, header ...string) *reply {
	t.Helper()
	return send(t, "POST", sp.URL+"/addresses", a.JSON(), append([]string{"Content-Type", "application/json"}, header...)...)
}

// countryRule is the catalog's rule, what a rejected country code's
// message states instead of listing 249 codes.
const countryRule = "must be an ISO 3166-1 alpha-2 country code, two letters"

// unknownCountry is the body signpost writes for a country code the address
// book API rejected: received is plain text (no quoting needed), and
// suggestions, if any, are the expected did_you_mean.
func unknownCountry(received string, suggestions ...string) string {
	b := `{"error":"invalid_country_code","field":"country_code","message":"` + countryRule + `","received":` + strconv.Quote(received)
	if len(suggestions) > 0 {
		b += `,"did_you_mean":` + quoteList(suggestions)
	}
	return b + `,"retryable":false}`
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// didYouMean decodes the did_you_mean of a body, or nil.
func didYouMean(t *testing.T, body []byte) []string {
	t.Helper()
	var b struct {
		DidYouMean []string `json:"did_you_mean"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, body)
	}
	return b.DidYouMean
}

// TestCatalogSuggestions puts configs/addresses.yaml in front of the
// address book API and sends country codes an agent might guess. The 249
// codes are too costly to list, so every rejection states the rule and
// did_you_mean carries the fix: an alias, a case slip, or a value within the
// edit bound; nothing when nothing is close; never the hidden XK, which is
// accepted as sent. Then signpost_error_body_tokens has counted every body.
func TestCatalogSuggestions(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, addressAPI())
	sp := startSignpost(t, addressesConfig, up.URL)

	rejected := 0
	for _, tt := range []struct {
		name, sent string
		want       []string // did_you_mean
	}{
		{"declared alias", "UK", []string{"GB"}},
		{"alias, three letters", "USA", []string{"US"}},
		{"alias, a country name", "Deutschland", []string{"DE"}},
		{"alias in any case", "united kingdom", []string{"GB"}},
		{"case slip", "gb", []string{"GB"}},
		{"mixed case slip", "Fr", []string{"FR"}},
		// Three letters allow one edit: deleting either B leaves GB,
		// deleting G leaves BB, and ties rank in declared order.
		{"one letter too many", "GBB", []string{"BB", "GB"}},
		// One or two characters allow no edit, and no code is one letter.
		{"one letter", "G", nil},
		// Edits are measured against the codes, not the aliases: no
		// two-letter code is within two edits of six letters.
		{"misspelt name", "Germny", nil},
		{"nothing close", "Atlantis", nil},
		// XK is hidden: accepted, never suggested, whatever is sent.
		{"hidden value, case slip", "xk", nil},
		{"hidden value, one letter too many", "XKK", nil},
		{"hidden value's country", "Kosovo", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := postAddress(t, sp, address{Street: "1 High St", City: "London", CountryCode: tt.sent})
			rejected++
			wantJSONError(t, got, http.StatusBadRequest, unknownCountry(tt.sent, tt.want...))
			dym := didYouMean(t, got.body)
			if slices.Contains(dym, "XK") {
				t.Errorf("did_you_mean %q proposes the hidden XK", dym)
			}
			if len(dym) > 3 {
				t.Errorf("did_you_mean %q has more than three values", dym)
			}
		})
	}

	t.Run("hidden value accepted", func(t *testing.T) {
		a := address{Street: "Rruga Agim Ramadani 1", City: "Pristina", CountryCode: "XK"}
		got := postAddress(t, sp, a)
		if got.status != http.StatusCreated || string(got.body) != string(a.JSON()) {
			t.Errorf("XK: %d %s, want 201 %s", got.status, got.body, a.JSON())
		}
	})

	t.Run("tokens counted", func(t *testing.T) {
		count := waitMetric(t, sp, float64(rejected), "signpost_error_body_tokens_count", "route", "create_address")
		if count != float64(rejected) {
			t.Fatalf("signpost_error_body_tokens_count{route=\"create_address\"} = %v within %v, want %d (one per body written)",
				count, waitTimeout, rejected)
		}
		// Each body above costs 20 to 80 tokens.
		sum := sp.counter(t, "signpost_error_body_tokens_sum", "route", "create_address")
		if lo, hi := 20*count, 80*count; sum < lo || sum > hi {
			t.Errorf("signpost_error_body_tokens_sum{route=\"create_address\"} = %v for %v bodies, want %v to %v", sum, count, lo, hi)
		}
		sp.wantCounter(t, 0, "signpost_error_body_tokens_uncounted_total")
	})
}

// waitMetric polls /metrics until the series name{labels} reaches want, for
// up to waitTimeout, and returns the last value seen. Bodies are counted
// off the request path, so a count lags the answers.
func waitMetric(t *testing.T, sp *signpost, want float64, name string, labels ...string) float64 {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		got := sp.counter(t, name, labels...)
		if got >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestListedEnumSuggestions checks did_you_mean beside a set the message
// lists: a wrong case or a stranger gets the list alone (configs/tickets.yaml),
// and an alias gets the value it names (testdata/tickets_aliases.yaml), since
// the list cannot say that high means p1.
func TestListedEnumSuggestions(t *testing.T) {
	t.Parallel()

	t.Run("no suggestion beside the list", func(t *testing.T) {
		t.Parallel()
		up := newUpstream(t, ticketapi.New().Handler())
		sp := startSignpost(t, ticketsConfig, up.URL)
		for _, sent := range []string{"OPEN", "opne", "active"} {
			got := send(t, "PATCH", sp.URL+"/tickets/T-8841", []byte(`{"status":"`+sent+`"}`), "Content-Type", "application/json")
			wantJSONError(t, got, http.StatusBadRequest, `{"error":"invalid_status","field":"status",`+
				`"message":"allowed values: open, pending, closed","received":"`+sent+`","retryable":false}`)
		}
	})

	t.Run("alias beside the list", func(t *testing.T) {
		t.Parallel()
		up := newUpstream(t, ticketapi.New().Handler())
		sp := startSignpost(t, "testdata/tickets_aliases.yaml", up.URL)
		for _, tt := range []struct{ sent, want string }{
			{"high", `,"did_you_mean":["p1"]`},
			{"URGENT", `,"did_you_mean":["p1"]`},
			{"Low", `,"did_you_mean":["p3"]`},
			{"P1", ""}, // a case slip the list answers
			{"p4", ""},
		} {
			body := `{"title":"Export fails","status":"open","priority":"` + tt.sent + `","customer_id":"C-1042"}`
			got := send(t, "POST", sp.URL+"/tickets", []byte(body), "Content-Type", "application/json")
			wantJSONError(t, got, http.StatusBadRequest, `{"error":"invalid_priority","field":"priority",`+
				`"message":"allowed values: p1, p2, p3","received":"`+tt.sent+`"`+tt.want+`,"retryable":false}`)
		}
		ok := send(t, "POST", sp.URL+"/tickets", []byte(`{"title":"Export fails","status":"open","priority":"p1","customer_id":"C-1042"}`),
			"Content-Type", "application/json")
		if ok.status != http.StatusCreated {
			t.Errorf("corrected call: %d %s, want 201", ok.status, ok.body)
		}
	})
}

// TestBatchedSuggestions sends one create_address call with three faults to
// a route validated before the upstream (testdata/addresses_before.yaml):
// each entry of the batched body carries its own did_you_mean, and an entry
// with nothing to suggest carries none. The upstream never sees the call.
func TestBatchedSuggestions(t *testing.T) {
	t.Parallel()
	api := &counting{h: addressAPI()}
	up := newUpstream(t, api)
	sp := startSignpost(t, "testdata/addresses_before.yaml", up.URL)

	got := postAddress(t, sp, address{Street: "1 High St", CountryCode: "UK", Kind: "office"})
	wantJSONError(t, got, http.StatusBadRequest, `{"error":"validation_failed",`+
		`"message":"3 fields are invalid; fix each one listed, then repeat the call.","errors":[`+
		`{"field":"city","code":"invalid_city","message":"is required; must be a string of at most 100 characters"},`+
		`{"field":"country_code","code":"invalid_country_code","message":"`+countryRule+`","received":"UK","did_you_mean":["GB"]},`+
		`{"field":"kind","code":"invalid_kind","message":"allowed values: home, work, billing","received":"office","did_you_mean":["work"]}`+
		`],"retryable":false}`)

	got = postAddress(t, sp, address{Street: "1 High St", City: "Berlin", CountryCode: "germany", Kind: "Home"})
	wantJSONError(t, got, http.StatusBadRequest, `{"error":"validation_failed",`+
		`"message":"2 fields are invalid; fix each one listed, then repeat the call.","errors":[`+
		`{"field":"country_code","code":"invalid_country_code","message":"`+countryRule+`","received":"germany","did_you_mean":["DE"]},`+
		`{"field":"kind","code":"invalid_kind","message":"allowed values: home, work, billing","received":"Home"}`+
		`],"retryable":false}`)

	if n := api.n.Load(); n != 0 {
		t.Errorf("the upstream saw %d requests, want none", n)
	}
	fixed := address{Street: "1 High St", City: "London", CountryCode: "GB", Kind: "work"}
	ok := postAddress(t, sp, fixed)
	if ok.status != http.StatusCreated || string(ok.body) != string(fixed.JSON()) {
		t.Errorf("corrected call: %d %s, want 201 %s", ok.status, ok.body, fixed.JSON())
	}
}

// TestCheckListingCost runs signpost check -v on the shipped address rules:
// it states what listing the 249 codes would cost and that messages state
// the rule instead.
func TestCheckListingCost(t *testing.T) {
	t.Parallel()
	out, errOut, code := runCLI(t, "check", "-v", addressesConfig)
	if code != 0 || errOut != "" {
		t.Errorf("exit %d, stderr %q; want 0 and nothing", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout has %d lines, want 2 (country_code's listing, then ok):\n%s", len(lines), out)
	}
	const at = "../configs/addresses.yaml:14:7: routes.create_address.fields.country_code: "
	if l := lines[0]; !strings.HasPrefix(l, at) ||
		!strings.Contains(l, "249 values, listing costs 514 tokens against a budget of 60") ||
		!strings.Contains(l, `messages state "`+countryRule+`"`) ||
		!strings.Contains(l, "did_you_mean proposes values") {
		t.Errorf("listing line = %q, want %q then the cost of 249 values, and that messages state the rule", l, at)
	}
	if want := "../configs/addresses.yaml: ok: 1 route, 3 fields, 2 error rules"; lines[1] != want {
		t.Errorf("last line = %q, want %q", lines[1], want)
	}
}
