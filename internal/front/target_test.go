package front

import (
	"net/url"
	"reflect"
	"testing"
)

// parseTarget must give what url.ParseRequestURI gives, on its own path
// and on url's.
func TestParseTargetAsURL(t *testing.T) {
	for _, target := range []string{
		"/", "/tickets/T-1", "/tickets/T-1?x=1", "/a?", "/a??", "/a?b?c", "//double/slash",
		"/a:b/@c;d=e,f+g$h&i~j", "/p%20q", "/p%2Fq?r", "/caf\xc3\xa9", "/a!b", "/a*b(c)'", "/a b",
		"/a?q=%zz", "/a?q=\x7f", "/a\x7f", "/a?\t", "*", "a/b", "", "/a#frag", "/a?b#c",
		"/%", "/%zz", "/ü?ü",
	} {
		t.Run(target, func(t *testing.T) { sameAsURL(t, target) })
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"/", "/tickets/T-1?x=1", "/a?", "/p%2Fq", "/a!b?c", "//x/y"} {
		f.Add(s)
	}
	f.Fuzz(sameAsURL)
}

func sameAsURL(t *testing.T, target string) {
	want, werr := url.ParseRequestURI(target)
	u := url.URL{Host: "left over", RawPath: "/from/before", Fragment: "x"}
	err := parseTarget(target, &u)
	if (err != nil) != (werr != nil) {
		t.Fatalf("parseTarget(%q): error %v, url.ParseRequestURI's %v", target, err, werr)
	}
	if err == nil && !reflect.DeepEqual(u, *want) {
		t.Fatalf("parseTarget(%q) = %#v, url.ParseRequestURI gives %#v", target, u, *want)
	}
}

// A plain target is parsed without an allocation.
func TestParseTargetPlainAllocatesNothing(t *testing.T) {
	var u url.URL
	allocs := testing.AllocsPerRun(100, func() {
		if err := parseTarget("/tickets/T-1?expand=customer", &u); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("parseTarget allocates %.1f times for a plain target, want 0", allocs)
	}
}
