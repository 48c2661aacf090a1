package test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestRetryAfter runs configs/search.yaml in front of a search API that
// limits its rate: a 429 is retryable, and retry_after_seconds carries the
// upstream's Retry-After, as seconds or as an HTTP date, else the rule's
// default of five seconds.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("q") {
		case "seconds":
			w.Header().Set("Retry-After", "2")
		case "date":
			w.Header().Set("Retry-After", time.Now().Add(30*time.Second).UTC().Format(http.TimeFormat))
		case "huge":
			w.Header().Set("Retry-After", "999999999")
		case "garbled":
			w.Header().Set("Retry-After", "soon")
		case "none":
		default:
			writeJSON(w, http.StatusOK, map[string]any{"articles": []string{}})
			return
		}
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": "Too many requests"})
	}))
	sp := startSignpost(t, "../configs/search.yaml", up.URL)
	const prefix = `{"error":"rate_limited","message":"too many searches in a short time; wait, then repeat the same search","retryable":true,"retry_after_seconds":`

	for _, tt := range []struct {
		name, q string
		want    string
	}{
		{"delay in seconds", "seconds", prefix + `2}`},
		{"no header: the rule's default", "none", prefix + `5}`},
		{"not a delay or a date: the rule's default", "garbled", prefix + `5}`},
		{"capped at a day", "huge", prefix + `86400}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantJSONError(t, send(t, "GET", sp.URL+"/search?q="+tt.q, nil), http.StatusTooManyRequests, tt.want)
		})
	}

	t.Run("HTTP date 30s ahead", func(t *testing.T) {
		got := send(t, "GET", sp.URL+"/search?q=date", nil)
		if got.status != http.StatusTooManyRequests {
			t.Fatalf("status = %d, want 429", got.status)
		}
		wantFraming(t, got)
		var e struct {
			Error      string `json:"error"`
			Retryable  bool   `json:"retryable"`
			RetryAfter *int   `json:"retry_after_seconds"`
		}
		if err := json.Unmarshal(got.body, &e); err != nil {
			t.Fatal(err)
		}
		// The date has whole seconds and both clocks moved a little.
		if e.Error != "rate_limited" || !e.Retryable || e.RetryAfter == nil || *e.RetryAfter < 28 || *e.RetryAfter > 31 {
			t.Errorf("body %s: want rate_limited, retryable, retry_after_seconds from 28 to 31", got.body)
		}
	})
	sp.wantCounter(t, 5, "signpost_rejections_total", "route", "search_articles", "code", "rate_limited", "field", "")
}
