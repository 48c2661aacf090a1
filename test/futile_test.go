package test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
)

// bookingAPI is a small room-booking upstream of the kind
// configs/bookings.yaml is written for: room R-12 has three slots on
// 2026-03-12, the first already booked, and every mistake is a bare string.
type bookingAPI struct {
	mu     sync.Mutex
	booked map[string]bool // by starts_at
	calls  int
}

var bookingSlots = []string{"2026-03-12T09:00:00Z", "2026-03-12T10:00:00Z", "2026-03-12T11:00:00Z"}

func newBookingAPI() *bookingAPI {
	return &bookingAPI{booked: map[string]bool{bookingSlots[0]: true}}
}

func (a *bookingAPI) requests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls
}

func (a *bookingAPI) Handler() http.Handler {
	mux := http.NewServeMux()
	room := func(w http.ResponseWriter, r *http.Request) bool {
		a.mu.Lock()
		a.calls++
		a.mu.Unlock()
		if r.PathValue("room") != "R-12" {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": "Unknown room"})
			return false
		}
		return true
	}
	mux.HandleFunc("GET /rooms/{room}/slots", func(w http.ResponseWriter, r *http.Request) {
		if !room(w, r) {
			return
		}
		type slot struct {
			StartsAt string `json:"starts_at"`
			Free     bool   `json:"free"`
		}
		var out []slot
		if r.URL.Query().Get("date") == "2026-03-12" {
			a.mu.Lock()
			for _, s := range bookingSlots {
				out = append(out, slot{s, !a.booked[s]})
			}
			a.mu.Unlock()
		}
		writeJSON(w, http.StatusOK, map[string]any{"slots": out})
	})
	mux.HandleFunc("POST /rooms/{room}/bookings", func(w http.ResponseWriter, r *http.Request) {
		if !room(w, r) {
			return
		}
		var in struct {
			StartsAt string `json:"starts_at"`
			Minutes  int    `json:"minutes"`
		}
		if json.NewDecoder(r.Body).Decode(&in) != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Bad request"})
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.booked[in.StartsAt] {
			writeJSON(w, http.StatusConflict, map[string]any{"error": "Slot already booked"})
			return
		}
		a.booked[in.StartsAt] = true
		writeJSON(w, http.StatusCreated, map[string]any{"booking_id": "B-1", "starts_at": in.StartsAt, "minutes": in.Minutes})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// TestFutileBooking books a slot someone else holds, through
// configs/bookings.yaml: the 409 is not retryable, says that repeating the
// call cannot succeed and what to do instead, and doing that (list the
// slots, book a free one) succeeds.
func TestFutileBooking(t *testing.T) {
	t.Parallel()
	api := newBookingAPI()
	up := newUpstream(t, api.Handler())
	sp := startSignpost(t, "../configs/bookings.yaml", up.URL)

	got := send(t, "POST", sp.URL+"/rooms/R-12/bookings", []byte(`{"starts_at":"2026-03-12T09:00:00Z","minutes":60}`), "Content-Type", "application/json")
	wantJSONError(t, got, http.StatusConflict, `{"error":"slot_taken","field":"starts_at",`+
		`"message":"the slot at \"2026-03-12T09:00:00Z\" is already booked; repeating this call cannot succeed; choose another slot with list_slots(room_id, date)",`+
		`"received":"2026-03-12T09:00:00Z","next_call":{"call":"list_slots","arguments":{"room_id":"R-12"}},"retryable":false}`)
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "book_slot", "code", "slot_taken", "field", "starts_at")

	// What the message says to do instead.
	slots := send(t, "GET", sp.URL+"/rooms/R-12/slots?date=2026-03-12", nil)
	want := `{"slots":[{"starts_at":"2026-03-12T09:00:00Z","free":false},{"starts_at":"2026-03-12T10:00:00Z","free":true},{"starts_at":"2026-03-12T11:00:00Z","free":true}]}`
	if slots.status != http.StatusOK || string(slots.body) != want {
		t.Fatalf("list_slots: %d %s, want 200 %s", slots.status, slots.body, want)
	}
	booked := send(t, "POST", sp.URL+"/rooms/R-12/bookings", []byte(`{"starts_at":"2026-03-12T10:00:00Z","minutes":60}`), "Content-Type", "application/json")
	if booked.status != http.StatusCreated {
		t.Errorf("booking a free slot: %d %s, want 201", booked.status, booked.body)
	}

	// book_slot validates before calling: a booking too short never
	// reaches the upstream.
	calls := api.requests()
	got = send(t, "POST", sp.URL+"/rooms/R-12/bookings", []byte(`{"starts_at":"2026-03-12T11:00:00Z","minutes":10}`), "Content-Type", "application/json")
	wantJSONError(t, got, http.StatusBadRequest,
		`{"error":"invalid_minutes","field":"minutes","message":"must be an integer from 15 to 240, e.g. 15","received":10,"retryable":false}`)
	if n := api.requests(); n != calls {
		t.Errorf("the upstream saw %d more requests, want none", n-calls)
	}
}

// paymentsAPI answers like the payments service configs/payments.yaml is
// written for: structured errors with an internal message, and a balance
// of 100.00 on account A-100200. Account A-999999 may not pay.
func paymentsAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /accounts/{account}/payments", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Amount   float64 `json:"amount"`
			Currency string  `json:"currency"`
		}
		fail := func(status int, code, msg string) {
			writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
		}
		switch {
		case json.NewDecoder(r.Body).Decode(&in) != nil:
			fail(http.StatusBadRequest, "bad_request", "unreadable body")
		case r.PathValue("account") == "A-999999":
			fail(http.StatusForbidden, "payments_disabled", "account flagged by risk rule RR-17 (ledger-db-3.internal)")
		case in.Currency != "EUR" && in.Currency != "USD" && in.Currency != "GBP":
			fail(http.StatusBadRequest, "bad_currency", "currency not supported")
		case in.Amount > 100:
			fail(http.StatusPaymentRequired, "insufficient_funds", "balance 100.00 < "+strconv.FormatFloat(in.Amount, 'f', 2, 64)+" (ledger-db-3.internal)")
		case in.Amount == 13:
			// An unlucky amount crashes the service.
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte("panic: runtime error: index out of range [13]\n\ngoroutine 7 [running]:\nmain.pay()\n\t/srv/payments/pay.go:42\n"))
		default:
			writeJSON(w, http.StatusCreated, map[string]any{"payment_id": "P-1", "amount": in.Amount, "currency": in.Currency})
		}
	})
	return mux
}

// TestProblemDetails runs configs/payments.yaml, which answers in RFC 9457
// Problem Details: one golden body for a futile 402, and the same format
// for a futile 403 without a field, a field error, a wrapped crash and
// signpost's own 502.
func TestProblemDetails(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, paymentsAPI())
	sp := startSignpost(t, "../configs/payments.yaml", up.URL)
	pay := func(account, body string) *reply {
		return send(t, "POST", sp.URL+"/accounts/"+account+"/payments", []byte(body), "Content-Type", "application/json")
	}

	// The golden body.
	wantProblem(t, pay("A-100200", `{"amount":250.5,"currency":"EUR"}`), http.StatusPaymentRequired,
		`{"type":"about:blank","title":"Payment Required","status":402,"code":"insufficient_balance","field":"amount",`+
			`"detail":"the balance is below 250.5; repeating this call cannot succeed; tell the user the balance is too low; a smaller amount needs the user's consent",`+
			`"received":250.5,"retryable":false}`)
	sp.wantCounter(t, 1, "signpost_rejections_total", "route", "create_payment", "code", "insufficient_balance", "field", "amount")

	for _, tt := range []struct {
		name, account, body string
		status              int
		want                string
	}{
		{"futile without a field", "A-999999", `{"amount":5,"currency":"EUR"}`, http.StatusForbidden,
			`{"type":"about:blank","title":"Forbidden","status":403,"code":"payments_not_permitted",` +
				`"detail":"this account may not make payments; repeating this call cannot succeed; tell the user; no call can enable payments","retryable":false}`},
		{"field error", "A-100200", `{"amount":5,"currency":"eur"}`, http.StatusBadRequest,
			`{"type":"about:blank","title":"Bad Request","status":400,"code":"invalid_currency","field":"currency",` +
				`"detail":"allowed values: EUR, USD, GBP","received":"eur","retryable":false}`},
		{"wrapped crash", "A-100200", `{"amount":13,"currency":"EUR"}`, http.StatusInternalServerError,
			`{"type":"about:blank","title":"Internal Server Error","status":500,"code":"upstream_failed",` +
				`"detail":"the upstream failed (500 Internal Server Error); the call may or may not have taken effect, so check before repeating it","retryable":false}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, pay(tt.account, tt.body), tt.status, tt.want)
		})
	}
	if got := pay("A-100200", `{"amount":20,"currency":"EUR"}`); got.status != http.StatusCreated {
		t.Errorf("a payment within the balance: %d %s, want 201", got.status, got.body)
	}

	t.Run("signpost's own 502", func(t *testing.T) {
		t.Parallel()
		down := startSignpost(t, "../configs/payments.yaml", refusingURL(t))
		got := send(t, "POST", down.URL+"/accounts/A-100200/payments", []byte(`{"amount":5,"currency":"EUR"}`))
		wantProblem(t, got, http.StatusBadGateway, `{"type":"about:blank","title":"Bad Gateway","status":502,"code":"upstream_unavailable",`+
			`"detail":"the upstream service could not be reached; the call did not take effect, retry it shortly","retryable":true}`)
	})
}
