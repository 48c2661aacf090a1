package draft

import (
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/observe"
)

// FuzzWrite drafts from what observe mode records of arbitrary traffic:
// Write must not panic, and must either return a rule file that loads (it
// checks that itself) or refuse for want of a routable operation, never
// for a draft of its own that does not load.
func FuzzWrite(f *testing.F) {
	f.Add("PATCH", "/tickets/T-1", `{"status":"OPEN"}`, `{"status":"open"}`, `{"error":"Invalid status"}`, 400)
	f.Add("GET", "/a/{b}/c", "", "", "<title>{{x}}</title>", 500)
	f.Add("POST", "/x y/1", `{"a.b":"*","c":[1]}`, `{"a.b":"?","c":[2]}`, `{"error":"\\d+ (x"}`, 409)
	f.Fuzz(func(t *testing.T, method, path, bad, good, resp string, status int) {
		rec := observe.New(observe.Options{})
		for caller := uint64(1); caller <= 4; caller++ {
			rec.Add(&observe.Exchange{Caller: caller, Method: method, Path: path, Body: []byte(bad), Status: status, Response: []byte(resp)})
			rec.Add(&observe.Exchange{Caller: caller, Method: method, Path: path, Body: []byte(good), Status: 200})
		}
		doc := rec.Document()
		d, err := Write(&doc, "fuzz.yaml", Options{MinEvidence: 1, MinEnumSupport: 1})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "draft: no operation of the document can be a route") {
				t.Fatalf("Write refused what it should draft: %v", err)
			}
			return
		}
		if len(d.Rules) == 0 || len(d.Tests) == 0 {
			t.Fatal("a draft with no rules or no tests, and no error")
		}
	})
}
