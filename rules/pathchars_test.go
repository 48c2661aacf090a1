package rules_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
)

// TestPercentEncodedTemplate: a template is written as a request line
// carries it, and matched decoded, as a request's URL.Path is; the form
// written is kept for what builds requests from it.
func TestPercentEncodedTemplate(t *testing.T) {
	for _, tc := range []struct {
		written, path, expanded string
	}{
		{"/api/v1/label/foo%20bar/values", "/api/v1/label/foo bar/values", "/api/v1/label/foo%20bar/values"},
		{"/label/foo%20bar/{id}", "/label/foo bar/{id}", "/label/foo%20bar/x%2Fy"},
		{"/caf%C3%A9/{id}", "/café/{id}", "/caf%C3%A9/x%2Fy"},
		{"/files/a%2Fb", "/files/a/b", "/files/a%2Fb"},
		{"/q/%3F%23%25", "/q/?#%", "/q/%3F%23%25"},
		// A variable's pattern matches the decoded path: it is left as it is.
		{"/n/{id:[0-9%]+}", "/n/{id:[0-9%]+}", "/n/x%2Fy"},
		{"/tickets/{id}", "/tickets/{id}", "/tickets/x%2Fy"},
	} {
		t.Run(tc.written, func(t *testing.T) {
			cfg := mustParse(t, "routes:\n  r:\n    method: GET\n    path: '"+tc.written+"'\n")
			r := cfg.Routes[0]
			if r.RawPath != tc.written || r.Path != tc.path {
				t.Errorf("RawPath %q, Path %q; want %q, %q", r.RawPath, r.Path, tc.written, tc.path)
			}
			if got := r.ExpandPath(map[string]string{"id": "x%2Fy"}); got != tc.expanded {
				t.Errorf("ExpandPath = %q, want %q", got, tc.expanded)
			}
		})
	}
}

func TestTargetFault(t *testing.T) {
	for _, tc := range []struct {
		target, want, fixed string
	}{
		{target: "/tickets/T-1?status=open&x=a/b?c"},
		{target: "/a%20b/%E9?q=%2F%3f"},
		{target: "/!$&'()*+,;=:@-._~"},
		{"/api/v1/label/foo bar/values", "a space at character 18, which a request line cannot carry as it is", "/api/v1/label/foo%20bar/values"},
		{"/a?q=a b", "a space at character 7, which a request line cannot carry as it is", "/a?q=a%20b"},
		{"/a#frag", `"#" at character 3, which starts a fragment, never sent in a request (a literal # is %23)`, "/a%23frag"},
		{"/a?q=1#frag", `"#" at character 7, which starts a fragment, never sent in a request (a literal # is %23)`, "/a?q=1%23frag"},
		{"/100%/x", `"%" at character 5, which must begin a percent-encoding of two hex digits, such as %20 (a percent sign itself is %25)`, "/100%25/x"},
		{"/a%2", `"%" at character 3, which must begin a percent-encoding of two hex digits, such as %20 (a percent sign itself is %25)`, "/a%252"},
		{"/ä/ö", `"ä" (U+00E4) at character 2, which a request line cannot carry as it is`, "/%C3%A4/%C3%B6"},
		{"/a\r\nb", "a carriage return at character 3, which a request line cannot carry as it is", "/a%0D%0Ab"},
		{"/a\x00", "the control character U+0000 at character 3, which a request line cannot carry as it is", "/a%00"},
		{"/a\xff", "the byte 0xFF (not UTF-8 text) at character 3, which a request line cannot carry as it is", "/a%FF"},
		{"/tickets/{ticket_id}", `"{" at character 10, which a request line cannot carry as it is`, "/tickets/%7Bticket_id%7D"},
		{`/q?f={"a":1}`, `"{" at character 6, which a request line cannot carry as it is`, "/q?f=%7B%22a%22:1%7D"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			f := rules.TargetFault(tc.target)
			switch {
			case f == nil && tc.want != "":
				t.Fatalf("no fault; want %q", tc.want)
			case f == nil:
				return
			case tc.want == "":
				t.Fatalf("fault %q; want none", f)
			}
			if f.Error() != tc.want || f.Fixed != tc.fixed {
				t.Errorf("fault %q, fixed %q\nwant %q, fixed %q", f, f.Fixed, tc.want, tc.fixed)
			}
		})
	}
}

// FuzzTargetFault: a target TargetFault passes is one a request line
// carries, as net/http reads it; one it faults, it mends in Fixed.
func FuzzTargetFault(f *testing.F) {
	for _, s := range []string{"/a b", "/a?q=1#f", "/%zz", "/é", "/a\r\nHost: x", "/{id}", "/a%2", "/a?b?c=/d", "/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		if !strings.HasPrefix(target, "/") {
			return
		}
		fault := rules.TargetFault(target)
		if fault != nil {
			if fault.Fixed == "" || rules.TargetFault(fault.Fixed) != nil {
				t.Fatalf("%q: fault %q, and its fix %q is not one", target, fault, fault.Fixed)
			}
			target = fault.Fixed
		}
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n")))
		if err != nil {
			t.Fatalf("%q passes, but net/http does not read it: %v", target, err)
		}
		if req.URL.RequestURI() == "" {
			t.Fatalf("%q: no request URI", target)
		}
	})
}
