package learn

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
)

// TestLearnedValuesHoldNoRequestBody: what learning keeps of a caller's
// requests, the value rejected and the value accepted, is a string of its
// own, not a part of the request body: that would keep the whole body
// alive for as long as the caller is remembered (10,000 callers sending
// bodies of 1 KiB held 12 MB). 1,000 callers each send a 64 KiB body
// rejected, and half of them one accepted: the 64 MB they sent must not
// stay in the heap.
func TestLearnedValuesHoldNoRequestBody(t *testing.T) {
	cfg, err := rules.Parse("learn.yaml", []byte(strings.Replace(learnRules, "callers: 2", "callers: 1000", 1)))
	if err != nil {
		t.Fatal(err)
	}
	route := cfg.Routes[0]
	l := newLearner(cfg.Learn, slog.New(slog.DiscardHandler), nil)
	pad := strings.Repeat("x", 64<<10)
	inUse := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := inUse()
	for i := range 1000 {
		caller := id(fmt.Sprint("caller-", i))
		l.rejected(caller, route, body(`{"country":"UK","pad":"`+pad+`"}`), &rewrite.Error{Field: "country"})
		if i%2 == 0 {
			l.succeeded(caller, route, body(`{"country":"GB","pad":"`+pad+`"}`))
		}
	}
	held := int64(inUse()) - int64(before)
	if l.table.callers.Len() != 1000 || len(l.pairs) != 1 {
		t.Fatalf("%d callers and %d pairs; want 1000 remembered and UK -> GB", l.table.callers.Len(), len(l.pairs))
	}
	if held > 8<<20 {
		t.Errorf("learning 1000 callers' values held %d MB of the heap; want a few: the 64 KiB bodies were kept", held>>20)
	}
	runtime.KeepAlive(l)
}
