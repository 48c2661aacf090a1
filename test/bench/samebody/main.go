// Command samebody checks that the benchmark's peers answer a wrong call
// with the body signpost answers it with: each file is parsed as one JSON
// object, and each peer's must have signpost's members, no others, each
// with an equal value (as JSON values: key order, spacing and escapes do
// not count).
//
//	samebody -also did_you_mean signpost=a.json nginxlua=b.json gorewrite=c.json
//
// The first name is the reference. It prints the bodies side by side,
// member by member, as a Markdown table (with a row for each member -also
// names, written or not), and exits 1 naming every member that differs. It is run by test/bench/run.sh before anything is timed.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
)

type body struct {
	name    string
	members map[string]any
	order   []string // as written
}

func main() {
	also := flag.String("also", "", "comma-separated `members` to show even when no body writes them")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: samebody [-also members] reference=file peer=file...")
		os.Exit(2)
	}
	var bodies []body
	for _, arg := range flag.Args() {
		name, file, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "samebody: %q: want name=file\n", arg)
			os.Exit(2)
		}
		b, err := read(name, file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "samebody: %s: %v\n", arg, err)
			os.Exit(1)
		}
		bodies = append(bodies, b)
	}
	var extra []string
	if *also != "" {
		extra = strings.Split(*also, ",")
	}
	table, problems := compare(bodies, extra)
	fmt.Print(table)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "samebody:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// read parses file as one JSON object, keeping its members' order.
func read(name, file string) (body, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return body{}, err
	}
	b := body{name: name, members: map[string]any{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return body{}, fmt.Errorf("not a JSON object: %.200s", data)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return body{}, fmt.Errorf("%v in %.200s", err, data)
		}
		key := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return body{}, fmt.Errorf("member %q: %v in %.200s", key, err, data)
		}
		if _, dup := b.members[key]; dup {
			return body{}, fmt.Errorf("member %q written twice in %.200s", key, data)
		}
		b.members[key] = v
		b.order = append(b.order, key)
	}
	return b, nil
}

// compare returns the bodies side by side and what sets a peer's apart
// from the reference, bodies[0]; each of also gets a row.
func compare(bodies []body, also []string) (string, []string) {
	ref := bodies[0]
	keys := slices.Clone(ref.order)
	for _, b := range bodies[1:] {
		for _, k := range slices.Concat(b.order, also) {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	var sb strings.Builder
	var problems []string
	sb.WriteString("| member |")
	for _, b := range bodies {
		fmt.Fprintf(&sb, " %s |", b.name)
	}
	sb.WriteString(" |\n|---|")
	sb.WriteString(strings.Repeat("---|", len(bodies)+1))
	sb.WriteString("\n")
	for _, k := range keys {
		fmt.Fprintf(&sb, "| `%s` |", k)
		same := true
		want, inRef := ref.members[k]
		for i, b := range bodies {
			v, ok := b.members[k]
			fmt.Fprintf(&sb, " %s |", cell(v, ok))
			if i == 0 {
				continue
			}
			switch {
			case !ok && !inRef:
				continue
			case !ok:
				problems = append(problems, fmt.Sprintf("%s does not write %q, which %s writes", b.name, k, ref.name))
			case !inRef:
				problems = append(problems, fmt.Sprintf("%s writes %q, which %s does not", b.name, k, ref.name))
			case !reflect.DeepEqual(canon(v), canon(want)):
				problems = append(problems, fmt.Sprintf("%s writes %q as %s, %s as %s", b.name, k, cell(v, true), ref.name, cell(want, true)))
			default:
				continue
			}
			same = false
		}
		if same {
			sb.WriteString(" same |\n")
		} else {
			sb.WriteString(" DIFFERS |\n")
		}
	}
	return sb.String(), problems
}

// canon makes numbers comparable by value: 42 and 42.0 are the same.
func canon(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return v.String()
		}
		return f
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = canon(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = canon(e)
		}
		return out
	}
	return v
}

// cell is a member's value for the table: compact JSON, or "(none)".
func cell(v any, ok bool) string {
	if !ok {
		return "(none)"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return "`" + strings.ReplaceAll(strings.TrimSpace(buf.String()), "|", `\|`) + "`"
}
