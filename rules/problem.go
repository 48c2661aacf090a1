package rules

import (
	"fmt"
	"strings"
)

// Problem is one mistake in a rule file, positioned at the key or value
// that holds it.
type Problem struct {
	File    string
	Line    int // 1-based; 0 when the problem concerns the whole file
	Column  int // 1-based; 0 when unknown
	Path    string
	Message string
	// Warning marks a finding that does not stop the file from loading:
	// something that works but is probably not what the author meant.
	Warning bool
}

// String renders the problem as "file:line:col: path: message", with
// "warning: " before the path of a warning.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Line, max(p.Column, 1))
	}
	b.WriteString(": ")
	if p.Warning {
		b.WriteString("warning: ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is every mistake found in one load, in file order. It is the
// error Load returns, so that one pass reports them all.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}
