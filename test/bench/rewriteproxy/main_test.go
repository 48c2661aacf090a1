package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"open"`) {
			w.Write([]byte(`{"id":"T-1"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Etag", `"x"`)
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"Invalid status"}`))
	}))
	defer up.Close()
	target, _ := url.Parse(up.URL)
	front := httptest.NewServer(newProxy(target))
	defer front.Close()

	long := strings.Repeat("x", 70)
	for _, tc := range []struct{ method, path, body, code, want string }{
		{"PATCH", "/tickets/T-1", `{"status":"OPEN"}`, "400",
			`{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`},
		{"PATCH", "/tickets/T-1", `{"status":42}`, "400",
			`{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":42,"retryable":false}`},
		{"PATCH", "/tickets/T-1", `{"status":"` + long + `"}`, "400",
			`{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"` + long[:64] + `…[+6 chars]","retryable":false}`},
		{"PATCH", "/tickets/T-1", `{}`, "400",
			`{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","retryable":false}`},
		{"PATCH", "/tickets/T-1", `{"status":"open"}`, "200", `{"id":"T-1"}`},
		{"POST", "/tickets", `{"status":"OPEN"}`, "400", `{"error":"Invalid status"}`},
	} {
		req, _ := http.NewRequest(tc.method, front.URL+tc.path, strings.NewReader(tc.body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.Status[:3] != tc.code || string(got) != tc.want {
			t.Errorf("%s %s %s: got %s %s, want %s %s", tc.method, tc.path, tc.body, res.Status, got, tc.code, tc.want)
		}
		if tc.code == "400" && tc.method == "PATCH" && (res.Header.Get("Etag") != "" || res.ContentLength != int64(len(got))) {
			t.Errorf("%s: the rewritten body kept Etag %q or a wrong length %d", tc.body, res.Header.Get("Etag"), res.ContentLength)
		}
	}
}

func TestSuggest(t *testing.T) {
	defer func(listed bool) { statusListed = listed }(statusListed)
	for _, tc := range []struct {
		listed bool
		sent   string
		want   []string
	}{
		{true, "OPEN", nil},
		{false, "OPEN", []string{"open"}},
		{false, "opne", []string{"open"}},
		{false, "closd", []string{"closed"}},
		{false, "pendnig", []string{"pending"}},
		{false, "op", nil},
		{false, "xyz", nil},
		{false, "open", nil},
	} {
		statusListed = tc.listed
		if got := suggest(tc.sent); !slices.Equal(got, tc.want) {
			t.Errorf("listed %v, suggest(%q) = %q, want %q", tc.listed, tc.sent, got, tc.want)
		}
	}
}
