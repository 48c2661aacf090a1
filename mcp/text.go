package mcp

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Text renders an error body signpost wrote, in its own format or as
// Problem Details, as the few lines a model reads when its client shows it
// only a tool result's text: the code and the field at fault, the rule or
// message, the value sent, the suggestions, each fault of a batch, the call
// to make first, and whether the same call may succeed later. Values the
// caller sent stay JSON-quoted, never spliced into prose. ok is false for a
// body signpost did not write, such as one passed through untouched.
//
//	Error invalid_status in status: allowed values: open, pending, closed (you sent "OPEN")
//	Retryable: no.
func Text(body []byte) (text string, ok bool) {
	if !gjson.ValidBytes(body) {
		return "", false
	}
	doc := gjson.ParseBytes(body)
	code, message := doc.Get("error"), doc.Get("message")
	if !code.Exists() {
		code, message = doc.Get("code"), doc.Get("detail") // RFC 9457
	}
	retryable := doc.Get("retryable")
	if !doc.IsObject() || code.Type != gjson.String || message.Type != gjson.String || !retryable.IsBool() {
		return "", false
	}
	var b strings.Builder
	b.WriteString("Error ")
	b.WriteString(code.Str)
	if field := doc.Get("field"); field.Type == gjson.String {
		b.WriteString(" in ")
		b.WriteString(field.Str)
	}
	b.WriteString(": ")
	fault(&b, message.Str, doc)
	if up := doc.Get("upstream_message"); up.Type == gjson.String {
		b.WriteString("\nThe upstream said: ")
		b.WriteString(up.Raw)
	}
	for _, e := range doc.Get("errors").Array() {
		b.WriteString("\n- ")
		b.WriteString(e.Get("field").Str)
		b.WriteString(": ")
		msg := e.Get("message").Str
		if same := e.Get("same_as"); same.Type == gjson.String {
			msg = "same rule as " + same.Str
		}
		fault(&b, msg, e)
	}
	if unlisted := doc.Get("unlisted").Array(); len(unlisted) > 0 {
		b.WriteString("\nAlso invalid: ")
		for i, name := range unlisted {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(name.Str)
		}
	}
	if call := doc.Get("next_call"); call.IsObject() {
		b.WriteString("\nNext call: ")
		b.WriteString(call.Get("call").Str)
		if args := call.Get("arguments"); args.IsObject() {
			b.WriteString(" with ")
			b.WriteString(args.Raw)
		}
	}
	b.WriteString("\nRetryable: ")
	switch after := doc.Get("retry_after_seconds"); {
	case !retryable.Bool():
		b.WriteString("no.")
	case after.Type == gjson.Number && after.Int() > 0:
		b.WriteString("yes, after " + plural(int(after.Int()), "second") + ".")
	default:
		b.WriteString("yes.")
	}
	return b.String(), true
}

// quotes reports whether message quotes received already, as a rule's
// {received} does: only a string, JSON-quoted, is told apart for sure; a
// number in a message may as well be a bound (5 in "from 5 to 15").
func quotes(message string, received gjson.Result) bool {
	return received.Type == gjson.String && strings.Contains(message, received.Raw)
}

// fault writes one fault: its message, the value sent unless the message
// quotes it already, and what signpost proposes instead.
func fault(b *strings.Builder, message string, v gjson.Result) {
	b.WriteString(message)
	if received := v.Get("received"); received.Exists() && !quotes(message, received) {
		b.WriteString(" (you sent ")
		b.WriteString(received.Raw)
		b.WriteString(")")
	}
	if dym := v.Get("did_you_mean").Array(); len(dym) > 0 {
		b.WriteString("; did you mean ")
		for i, s := range dym {
			switch {
			case i == 0:
			case i == len(dym)-1:
				b.WriteString(" or ")
			default:
				b.WriteString(", ")
			}
			b.WriteString(s.Raw)
		}
		b.WriteString("?")
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
