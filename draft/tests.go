package draft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/rewrite"
	"github.com/signpost-proxy/signpost/rules"
	"github.com/signpost-proxy/signpost/rules/rulefile"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"gopkg.in/yaml.v3"
)

// renderTests writes the tests file: per route, a well-formed call that
// passes through, then one case per error rule whose match holds for its
// sample, built from that sample. A value the recorder masked, or one the
// drafted constraints refuse though the error is not about it, is replaced
// by a good one, so that each case tests its rule alone.
func renderTests(routes []*routeDraft, cfg *rules.Config, rulesName string) ([]byte, error) {
	var cases []*yaml.Node
	for _, r := range routes {
		route := cfg.Route(r.name)
		if route == nil {
			return nil, fmt.Errorf("draft: route %s is missing from the drafted rules", r.name)
		}
		cases = append(cases, successCase(r, route))
		for _, d := range r.rules {
			if d.active && d.verified {
				if c := errorCase(r, route, d); c != nil {
					cases = append(cases, c)
				}
			}
		}
	}
	doc := mapping(false,
		"rules", str(rulesName),
		"tests", &yaml.Node{Kind: yaml.SequenceNode, Content: cases})
	doc.HeadComment = "Rule unit tests for " + rulesName + ", drafted from the samples observe mode kept.\n" +
		"Run them with signpost test; each error case is one the upstream really returned."
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("draft: writing the tests: %v", err)
	}
	return b.Bytes(), nil
}

// successCase is a call of the route with good values for every declared
// field, which the upstream answers 200 and signpost passes through.
func successCase(r *routeDraft, route *rules.Route) *yaml.Node {
	vars := map[string]string{}
	for _, v := range r.pathVars() {
		f := r.field(v, "path")
		vars[v] = goodValue(f, route.Field(nameOf(f, v)))
	}
	query := url.Values{}
	body := []byte(`{}`)
	for _, f := range r.fields {
		cf := route.Field(f.name)
		if cf == nil || !f.active || f.kind == "" || f.obs.In == "path" {
			continue
		}
		v := goodValue(f, cf)
		switch f.obs.In {
		case "query":
			query.Set(f.obs.Name, v)
		case "body":
			body, _ = sjson.SetRawBytes(body, gjsonEscape(f.obs.Name), []byte(jsonOf(f, v)))
		}
	}
	req := []any{"method", str(r.op.Method), "path", str(fillPath(r.op.Path, vars, query))}
	if hasBody(r.op.Method) && string(body) != "{}" {
		req = append(req, "body", jsonNode(body))
	}
	c := mapping(false,
		"name", str(r.name+": a well-formed call passes through untouched"),
		"request", mapping(true, req...),
		"upstream", mapping(true, "status", num(200), "body", mapping(true, "ok", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})),
		"expect", mapping(true, "status", num(200), "body", mapping(true, "ok", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})))
	return c
}

// errorCase replays an error's sample through its rule.
func errorCase(r *routeDraft, route *rules.Route, d *ruleDraft) *yaml.Node {
	s := d.err.Sample
	var blamed *rules.Field
	if d.fieldOK {
		blamed = route.Field(d.field)
	}
	// fix returns the value to send for a field: the sample's, unless it
	// is masked, or breaks a constraint the error is not about.
	var faulty bool
	fix := func(f *fieldDraft, cf *rules.Field, v gjson.Result) (string, bool) {
		if cf == nil {
			return "", false
		}
		if cf == blamed {
			if strings.Contains(v.String(), masked) {
				for _, b := range f.obs.Bad {
					if !strings.Contains(b.Value, masked) {
						v := valueOf(f, b.Value)
						faulty = !cf.Check(v)
						return b.Value, true
					}
				}
			}
			faulty = !cf.Check(v)
			return "", false
		}
		if strings.Contains(v.String(), masked) || !cf.Check(v) {
			return goodValue(f, cf), true
		}
		return "", false
	}

	// The path, its variables taken from the sample by position.
	tpl, got := segments(r.op.Path), strings.Split(strings.Trim(s.Path, "/"), "/")
	path := s.Path
	if path == "" {
		return nil
	}
	if len(tpl) == len(got) {
		vars := map[string]string{}
		for i, seg := range tpl {
			if !seg.isVar {
				continue
			}
			v, err := url.PathUnescape(got[i])
			if err != nil {
				v = got[i]
			}
			f := r.field(seg.text, "path")
			if nv, ok := fix(f, route.Field(nameOf(f, seg.text)), rules.Text(v)); ok {
				v = nv
			}
			vars[seg.text] = v
		}
		path = fillPath(r.op.Path, vars, nil)
	}
	query, err := url.ParseQuery(s.Query)
	if err != nil {
		query = url.Values{}
	}
	for _, f := range r.fields {
		if f.obs.In == "query" && query.Has(f.obs.Name) {
			if nv, ok := fix(f, route.Field(f.name), rules.Text(query.Get(f.obs.Name))); ok {
				query.Set(f.obs.Name, nv)
			}
		}
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	method := s.Method
	if method == "" {
		method = r.op.Method
	}
	req := []any{"method", str(method), "path", str(path)}
	if s.RequestBody != "" {
		b := []byte(s.RequestBody)
		if !gjson.ValidBytes(b) || !gjson.ParseBytes(b).IsObject() {
			if route.HasBodyFields() {
				return nil // signpost would refuse the body itself
			}
			req = append(req, "body", str(s.RequestBody))
		} else {
			for _, f := range r.fields {
				if f.obs.In != "body" {
					continue
				}
				p := gjsonEscape(f.obs.Name)
				if v := gjson.GetBytes(b, p); v.Exists() {
					if nv, ok := fix(f, route.Field(f.name), v); ok {
						b, _ = sjson.SetRawBytes(b, p, []byte(jsonOf(f, nv)))
					}
				}
			}
			req = append(req, "body", jsonNode(b))
		}
	}

	code := d.code
	if faulty {
		// A value that breaks its declared constraint is told the
		// constraint, under the code signpost gives the field's faults.
		code = rewrite.FieldCode(route, blamed)
	}
	up := []any{"status", num(d.status)}
	if ct := s.ContentType; ct != "" {
		up = append(up, "headers", mapping(true, "Content-Type", str(ct)))
	}
	if gjson.Valid(s.ResponseBody) && strings.TrimSpace(s.ResponseBody) != "" {
		up = append(up, "body", jsonNode([]byte(s.ResponseBody)))
	} else {
		up = append(up, "body", str(s.ResponseBody))
	}
	want := []any{"error", str(code)}
	if blamed != nil {
		want = append(want, "field", str(blamed.Name))
	}
	if d.nextOK {
		want = append(want, "next_call", mapping(true, "call", str(d.nextCall[:strings.Index(d.nextCall, "(")])))
	}
	return mapping(false,
		"name", str(fmt.Sprintf("%s: %d %s is %s", r.name, d.status, testText(d), d.code)),
		"request", mapping(true, req...),
		"upstream", mapping(true, up...),
		"expect", mapping(false, "status", num(d.status), "body_subset", mapping(true, want...)))
}

func testText(d *ruleDraft) string {
	t := rulefile.OneLine(d.err.Text)
	if r := []rune(t); len(r) > 40 {
		t = string(r[:40]) + "…"
	}
	return strconv.Quote(t)
}

// nameOf is a field's name in the rule file, or def when there is none.
func nameOf(f *fieldDraft, def string) string {
	if f == nil {
		return def
	}
	return f.name
}

// goodValue is a value the field's drafted constraint takes: the most
// frequent successful value that does, else the constraint's example.
func goodValue(f *fieldDraft, cf *rules.Field) string {
	if f != nil {
		for _, v := range f.obs.Good {
			if strings.Contains(v.Value, masked) || f.obs.Long > 0 && len(v.Value) >= cutBytes {
				continue // hidden, or perhaps cut
			}
			if cf == nil || cf.Check(valueOf(f, v.Value)) {
				return v.Value
			}
		}
	}
	switch {
	case cf != nil && len(cf.Enum) > 0:
		return cf.Enum[0]
	case cf != nil && cf.Example != "":
		return cf.Example
	}
	return "1"
}

// valueOf reads a recorded value as the field's JSON type.
func valueOf(f *fieldDraft, v string) gjson.Result {
	if f.obs.In == "body" && (f.obs.Kind == "number" || f.obs.Kind == "boolean") {
		return gjson.Parse(v)
	}
	return rules.Text(v)
}

// jsonOf writes a value as the field's JSON type.
func jsonOf(f *fieldDraft, v string) string {
	if (f.obs.Kind == "number" || f.obs.Kind == "boolean") && gjson.Valid(v) {
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// fillPath fills a template's variables and adds a query.
func fillPath(tpl string, vars map[string]string, query url.Values) string {
	var b strings.Builder
	for _, s := range segments(tpl) {
		b.WriteByte('/')
		if s.isVar {
			v := vars[s.text]
			if v == "" {
				v = "1"
			}
			// A variable that takes a slash, such as a repository's name
			// team/workers, keeps it: each of its segments is escaped.
			parts := []string{v}
			if s.slash {
				parts = strings.Split(v, "/")
			}
			for i, p := range parts {
				parts[i] = url.PathEscape(p)
			}
			b.WriteString(strings.Join(parts, "/"))
		} else {
			b.WriteString(s.text)
		}
	}
	if b.Len() == 0 {
		b.WriteByte('/')
	}
	if len(query) > 0 {
		b.WriteString("?" + query.Encode())
	}
	return b.String()
}

func hasBody(method string) bool { return method == "POST" || method == "PUT" || method == "PATCH" }

// mapping builds a mapping node of keys and values: a value is a *yaml.Node.
func mapping(flow bool, kvs ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	if flow {
		n.Style = yaml.FlowStyle
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		n.Content = append(n.Content, str(kvs[i].(string)), kvs[i+1].(*yaml.Node))
	}
	return n
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func num(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

// jsonNode turns a JSON object or array into a flow node, members in their
// order. Any other text stays a string, as written: signpost test sends a
// string body as it is, so a JSON string keeps its quotes ('"hello"'), and
// null or 1.50 are sent as the upstream wrote them.
func jsonNode(b []byte) *yaml.Node {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' && t[0] != '[' {
		return str(string(b))
	}
	var n yaml.Node
	if yaml.Unmarshal(b, &n) != nil || len(n.Content) != 1 || !sameJSON(b, n.Content[0]) {
		return str(string(b))
	}
	flow(n.Content[0])
	return n.Content[0]
}

// sameJSON reports whether the node decodes to the same value as the JSON.
func sameJSON(b []byte, n *yaml.Node) bool {
	var fromYAML any
	if n.Decode(&fromYAML) != nil {
		return false
	}
	y, err := json.Marshal(fromYAML)
	if err != nil {
		return false
	}
	var a, c any
	if json.Unmarshal(b, &a) != nil || json.Unmarshal(y, &c) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	z, _ := json.Marshal(c)
	return bytes.Equal(x, z)
}

func flow(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		n.Style = yaml.FlowStyle
		for _, c := range n.Content {
			flow(c)
		}
	case yaml.ScalarNode:
		n.Style = 0
	}
}
