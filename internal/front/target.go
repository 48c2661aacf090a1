package front

import (
	"net/url"
	"strings"
)

// parseTarget parses a request target in origin form into u, as
// url.ParseRequestURI does. A plain target, a path of characters a path
// never escapes with any query, the kind nearly every request has, is
// split without url's parser and so without an allocation; any other
// goes through url's parser.
func parseTarget(target string, u *url.URL) error {
	path, query, hasQuery := strings.Cut(target, "?")
	if path != "" && path[0] == '/' && plainPath(path) && !hasControl(query) {
		*u = url.URL{Path: path, RawQuery: query, ForceQuery: hasQuery && query == ""}
		return nil
	}
	parsed, err := url.ParseRequestURI(target)
	if err != nil {
		return err
	}
	*u = *parsed
	return nil
}

// plainPath reports whether every byte of path is one that url keeps as
// it is in a path: unreserved, or a delimiter a path may hold unescaped.
// Such a path needs no unescaping and no RawPath.
func plainPath(path string) bool {
	for i := 0; i < len(path); i++ {
		if !pathByte[path[i]] {
			return false
		}
	}
	return true
}

// pathByte marks the bytes of a plain path.
var pathByte = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/$&+,:;=@" {
		t[c] = true
	}
	return t
}()

// hasControl reports whether s holds a control byte, which url refuses
// anywhere in a target.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}
