// Package rulefile writes rule files for people to review: line by line,
// so that a comment can sit beside each setting and a setting can be
// written commented out, with every string plain where YAML reads it back
// unchanged and quoted where it would not. signpost draft and signpost
// import openapi both write through it.
package rulefile

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Writer builds a rule file line by line. Callers render each value with
// Scalar, BlockScalar or Quoted; Writer itself only places lines.
type Writer struct{ b strings.Builder }

// Line writes text at an indent of spaces.
func (w *Writer) Line(indent int, text string) { w.put(indent, false, text) }

// Linef writes a formatted line at an indent of spaces.
func (w *Writer) Linef(indent int, format string, args ...any) {
	w.put(indent, false, fmt.Sprintf(format, args...))
}

// Inactive writes text commented out ("# text"): a setting for the
// reviewer to confirm by removing the "#".
func (w *Writer) Inactive(indent int, text string) { w.put(indent, true, text) }

// Comment writes text as comment lines, one per line of text, with
// characters that are not printable turned to spaces so that no text can
// end the comment early.
func (w *Writer) Comment(indent int, text string) {
	for _, l := range strings.Split(text, "\n") {
		w.put(indent, true, OneLine(l))
	}
}

// Note writes text as a comment worded to fit 100 columns, the lines after
// the first indented two more: a remark too long for one line.
func (w *Writer) Note(indent int, text string) {
	width := max(100-indent, 60)
	line := ""
	for _, word := range strings.Fields(OneLine(text)) {
		if line != "" && strings.TrimSpace(line) != "" && utf8.RuneCountInString(line)+3+utf8.RuneCountInString(word) > width {
			w.put(indent, true, line)
			line = "  "
		}
		if strings.TrimSpace(line) != "" {
			line += " "
		}
		line += word
	}
	if strings.TrimSpace(line) != "" {
		w.put(indent, true, line)
	}
}

// Append writes lines rendered elsewhere, by another Writer, as they are.
func (w *Writer) Append(lines []byte) { w.b.Write(lines) }

// Blank writes an empty line.
func (w *Writer) Blank() { w.b.WriteByte('\n') }

// Len is the number of bytes written so far.
func (w *Writer) Len() int { return w.b.Len() }

// Bytes is the file written so far.
func (w *Writer) Bytes() []byte { return []byte(w.b.String()) }

func (w *Writer) put(indent int, commented bool, text string) {
	w.b.WriteString(strings.Repeat(" ", indent))
	if commented {
		w.b.WriteString("#")
		if text != "" {
			w.b.WriteString(" ")
		}
	}
	w.b.WriteString(text)
	w.b.WriteByte('\n')
}

// OneLine keeps text to one printable line, for a comment or a message
// in the file: what is not printable, line breaks among it, becomes a space.
func OneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
}
