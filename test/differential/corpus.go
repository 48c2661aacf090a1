// Package differential judges signpost against net/http: it sends the same
// raw bytes to signpost and to a reference proxy (net/http's Server in
// front of httputil.ReverseProxy), each in front of an upstream of its own
// that records every request it parses, and compares what each caller got
// back and what each upstream received. Where signpost does by hand what
// net/http does, it must be at least as safe; the few places where it is
// deliberately stricter are named rules in compare.go.
//
// Everything listens on 127.0.0.1 port 0 and every wait is bounded.
package differential

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// Case is one entry of the corpus: raw bytes a caller writes on a fresh
// connection, with placeholders (see Expand).
type Case struct {
	Name string
	Raw  []byte
}

//go:embed testdata/requests.txt
var corpusText string

// Corpus returns the cases of testdata/requests.txt. It panics on a
// malformed file: the file is part of the program.
func Corpus() []Case {
	cases, err := ParseCorpus(corpusText)
	if err != nil {
		panic("differential: testdata/requests.txt: " + err.Error())
	}
	return cases
}

// ParseCorpus reads the corpus format: one case per line, its name, a tab
// and the raw bytes as a Go-quoted string; a line that starts with a tab
// and a quoted string continues the case above it. Blank lines and lines
// starting with # are skipped.
func ParseCorpus(text string) ([]Case, error) {
	var cases []Case
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, quoted, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("line %d: want name<TAB>\"quoted bytes\", got %q", n, line)
		}
		raw, err := strconv.Unquote(strings.TrimSpace(quoted))
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %v", n, quoted, err)
		}
		if name == "" {
			if len(cases) == 0 {
				return nil, fmt.Errorf("line %d: a continuation line before any case", n)
			}
			last := &cases[len(cases)-1]
			last.Raw = append(last.Raw, raw...)
			continue
		}
		if seen[name] {
			return nil, fmt.Errorf("line %d: a second case named %q", n, name)
		}
		seen[name] = true
		cases = append(cases, Case{Name: name, Raw: []byte(raw)})
	}
	return cases, sc.Err()
}

// Placeholders in a case's bytes, replaced by Expand.
const (
	// PathPlaceholder becomes the case's path prefix, /c/ and six digits:
	// always 9 bytes, so that a Content-Length counting a body that holds
	// it is the same for every case.
	PathPlaceholder = "$P"
	// HostPlaceholder becomes the case's host name, c, six digits and
	// .test: always 12 bytes.
	HostPlaceholder = "$H"
	// FillerPlaceholder becomes 4096 bytes of 'f', to make a head longer
	// than signpost's read buffer.
	FillerPlaceholder = "$4K"
)

// MaxExpanded bounds what Expand may make of a case.
const MaxExpanded = 64 << 10

// Key tells one case's traffic apart from every other's at the upstream:
// its requests carry Key.Prefix in their target or Key.Host as their host.
type Key int

var lastKey atomic.Int64

// NewKey returns a key no other case of this process has, wrapping after
// a million.
func NewKey() Key { return Key(lastKey.Add(1) % 1_000_000) }

// Prefix is the path prefix that $P becomes.
func (k Key) Prefix() string { return fmt.Sprintf("/c/%06d", int(k)) }

// Host is the host name that $H becomes.
func (k Key) Host() string { return fmt.Sprintf("c%06d.test", int(k)) }

// Expand replaces the placeholders in raw with k's prefix and host and
// the filler. It reports false when the result would exceed MaxExpanded.
func Expand(raw []byte, k Key) ([]byte, bool) {
	filler := bytes.Count(raw, []byte(FillerPlaceholder))
	if len(raw)+filler*4096 > MaxExpanded {
		return nil, false
	}
	out := bytes.ReplaceAll(raw, []byte(FillerPlaceholder), bytes.Repeat([]byte("f"), 4096))
	out = bytes.ReplaceAll(out, []byte(PathPlaceholder), []byte(k.Prefix()))
	out = bytes.ReplaceAll(out, []byte(HostPlaceholder), []byte(k.Host()))
	return out, len(out) <= MaxExpanded
}

// Expand is the package's Expand for the case's bytes.
func (c Case) Expand(k Key) []byte {
	out, ok := Expand(c.Raw, k)
	if !ok {
		panic("differential: case " + c.Name + " expands past MaxExpanded")
	}
	return out
}

// keyOf returns the key a request target or host carries, or -1.
func keyOf(target, host string) Key {
	if rest, ok := strings.CutPrefix(target, "/c/"); ok {
		if k, ok := digits(rest, "/?"); ok {
			return k
		}
	}
	if rest, ok := strings.CutPrefix(host, "c"); ok {
		if k, ok := digits(rest, "."); ok {
			return k
		}
	}
	return -1
}

// digits reads six digits at the start of s, which must end there or go on
// with one of the bytes in next.
func digits(s, next string) (Key, bool) {
	if len(s) < 6 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:6])
	if err != nil || n < 0 || strings.ContainsAny(s[:6], "+-") {
		return 0, false
	}
	if len(s) > 6 && !strings.ContainsRune(next, rune(s[6])) {
		return 0, false
	}
	return Key(n), true
}
