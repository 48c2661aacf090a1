package metrics_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/signpost-proxy/signpost/metrics"
)

// dashboardFile is the Grafana dashboard the project ships.
const dashboardFile = "../deploy/grafana/signpost.json"

// exported returns the series names signpost exports: every collector
// touched once, then gathered; a histogram contributes its _bucket, _sum
// and _count series.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Rejected("r", "c", "f")
	m.Unmatched("r", 400)
	m.WouldRewrite("r", "c")
	m.Oversized("r")
	m.UpstreamFailed("r", "upstream_timeout")
	m.BodyTokens("r", 40)
	m.Uncounted()
	m.Recovered("r", "c", 2)
	m.Unrecovered("r", "c")
	m.RecoveryStopped("r", "c")
	m.RepeatStopped("r", "c")
	m.Duration("r", metrics.OutcomeSuccess, 0.01)
	m.Reloaded(true, 1)
	m.Reloaded(false, 0)
	m.Limited("concurrency")
	m.Refused("missing_host")
	m.BufferBudget(64 << 20)
	m.BufferBudgetInUse(1)
	m.BufferBudgetExhausted()
	reg.MustRegister(metrics.LogLinesDropped(func() uint64 { return 0 }))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				names[mf.GetName()+suffix] = true
			}
			continue
		}
		names[mf.GetName()] = true
	}
	return names
}

// A dashboard's panels and variables, as far as the test reads them.
type (
	dashboard struct {
		SchemaVersion int      `json:"schemaVersion"`
		UID           string   `json:"uid"`
		Title         string   `json:"title"`
		Panels        []*panel `json:"panels"`
		Templating    struct {
			List []variable `json:"list"`
		} `json:"templating"`
	}
	variable struct {
		Name       string      `json:"name"`
		Type       string      `json:"type"`
		Query      any         `json:"query"`
		Definition string      `json:"definition"`
		Datasource *datasource `json:"datasource"`
	}
	panel struct {
		ID         int                      `json:"id"`
		Type       string                   `json:"type"`
		Title      string                   `json:"title"`
		Datasource *datasource              `json:"datasource"`
		GridPos    struct{ H, W, X, Y int } `json:"gridPos"`
		Targets    []struct {
			Expr       string      `json:"expr"`
			RefID      string      `json:"refId"`
			Datasource *datasource `json:"datasource"`
		} `json:"targets"`
		Panels []*panel `json:"panels"` // of a collapsed row
	}
	datasource struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	}
)

func loadDashboard(t *testing.T) *dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("%s is not valid JSON", dashboardFile)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return &d
}

// all lists the panels, those of rows included.
func (d *dashboard) all() []*panel {
	var out []*panel
	for _, p := range d.Panels {
		out = append(out, p)
		out = append(out, p.Panels...)
	}
	return out
}

// TestDashboardMetrics checks that every metric a panel or variable of
// the dashboard queries is one signpost exports, and that every metric
// signpost exports has a panel.
func TestDashboardMetrics(t *testing.T) {
	d := loadDashboard(t)
	have := exported(t)
	used := map[string]bool{}
	check := func(where, expr string) {
		names, err := metricNames(expr)
		if err != nil {
			t.Errorf("%s: %v in %s", where, err, expr)
			return
		}
		if len(names) == 0 {
			t.Errorf("%s queries no metric: %s", where, expr)
		}
		for _, n := range names {
			used[n] = true
			if !have[n] {
				t.Errorf("%s queries %s, which signpost does not export; it exports %s", where, n, strings.Join(sortedKeys(have), ", "))
			}
		}
	}
	for _, p := range d.all() {
		for _, tg := range p.Targets {
			check(fmt.Sprintf("panel %d %q, query %s", p.ID, p.Title, tg.RefID), tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: definition %q is not label_values(metric, label)", v.Name, v.Definition)
			continue
		}
		check("variable "+v.Name, m[1])
	}
	for n := range have {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		if !used[n] && !used[base+"_bucket"] && !used[base+"_count"] && !used[base+"_sum"] {
			t.Errorf("no panel shows %s", n)
		}
	}
}

// TestDashboardShape checks what Grafana needs to import the dashboard
// into any instance: a Prometheus data source variable that every query
// uses, unique panel ids, and panels on the 24-column grid.
func TestDashboardShape(t *testing.T) {
	d := loadDashboard(t)
	if d.SchemaVersion < 36 || d.UID == "" || d.Title == "" {
		t.Errorf("schemaVersion %d, uid %q, title %q; want a schemaVersion of 36 or more, a uid and a title", d.SchemaVersion, d.UID, d.Title)
	}
	hasVar := slices.ContainsFunc(d.Templating.List, func(v variable) bool {
		return v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus"
	})
	if !hasVar {
		t.Errorf("no variable datasource of type datasource with query prometheus")
	}
	want := datasource{Type: "prometheus", UID: "${datasource}"}
	for _, v := range d.Templating.List {
		if v.Type == "query" && (v.Datasource == nil || *v.Datasource != want) {
			t.Errorf("variable %s: datasource %+v, want %+v", v.Name, v.Datasource, want)
		}
	}
	ids := map[int]string{}
	for _, p := range d.all() {
		if prev, dup := ids[p.ID]; dup || p.ID == 0 {
			t.Errorf("panel %q: id %d, already panel %q's or zero", p.Title, p.ID, prev)
		}
		ids[p.ID] = p.Title
		if g := p.GridPos; g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q: gridPos %+v is off the 24-column grid", p.Title, g)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || *p.Datasource != want || len(p.Targets) == 0 {
			t.Errorf("panel %q: datasource %+v and %d queries; want %+v and at least one", p.Title, p.Datasource, len(p.Targets), want)
		}
		for _, tg := range p.Targets {
			if tg.Datasource == nil || *tg.Datasource != want || tg.RefID == "" {
				t.Errorf("panel %q, query %q: datasource %+v; want %+v and a refId", p.Title, tg.RefID, tg.Datasource, want)
			}
		}
	}
}

var (
	labelValues = regexp.MustCompile(`^label_values\(\s*([^,]+?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)$`)
	// grouping is a clause whose parenthesized list names labels.
	grouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	// token reads a variable, an identifier, a number or duration (1e3,
	// 5m), or one other character.
	token    = regexp.MustCompile(`\$?[A-Za-z_:][A-Za-z0-9_:]*|[0-9][0-9A-Za-z.]*|\S`)
	keywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"inf": true, "nan": true, "Inf": true, "NaN": true}
)

// metricNames returns the metric names a PromQL expression selects: the
// identifiers left once strings, label matchers, ranges and grouping
// labels are removed that are neither functions nor keywords.
func metricNames(expr string) ([]string, error) {
	var b strings.Builder
	depth := map[byte]int{}
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for ; j < len(expr) && expr[j] != c; j++ {
				if expr[j] == '\\' && c != '`' {
					j++
				}
			}
			if j >= len(expr) {
				return nil, fmt.Errorf("an unterminated string at %d", i)
			}
			i = j
		case c == '{' || c == '[':
			depth[c]++
		case c == '}' || c == ']':
			open := byte('{')
			if c == ']' {
				open = '['
			}
			if depth[open] == 0 {
				return nil, fmt.Errorf("an unbalanced %c at %d", c, i)
			}
			depth[open]--
			b.WriteByte(' ')
		case depth['{'] == 0 && depth['['] == 0:
			b.WriteByte(c)
		}
	}
	if depth['{'] != 0 || depth['['] != 0 {
		return nil, fmt.Errorf("an unclosed { or [")
	}
	rest := grouping.ReplaceAllString(b.String(), " ")
	toks := token.FindAllString(rest, -1)
	var names []string
	for i, tok := range toks {
		c := tok[0]
		if c == '$' || c >= '0' && c <= '9' || !(c == '_' || c == ':' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') || keywords[tok] {
			continue
		}
		if i+1 < len(toks) && toks[i+1] == "(" {
			continue // a function or an aggregation
		}
		names = append(names, tok)
	}
	return names, nil
}

func TestMetricNames(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{`sum by (route, code) (rate(signpost_rejections_total{job=~"$job", route=~"$route"}[$__rate_interval]))`, []string{"signpost_rejections_total"}},
		{`histogram_quantile(0.99, sum without (instance) (rate(a_bucket{le=~"3|3.0"}[5m])))`, []string{"a_bucket"}},
		{`(sum(increase(a_count[$__range])) or vector(0)) / on (route) group_left (code) b`, []string{"a_count", "b"}},
		{`time() - max by (instance) (c{x="}{[\"]"}) > bool 1e3 offset 5m`, []string{"c"}},
		{`d[5m:1m] and e unless f`, []string{"d", "e", "f"}},
		{`vector(0)`, nil},
	} {
		got, err := metricNames(tt.expr)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("metricNames(%s) = %q, %v; want %q", tt.expr, got, err, tt.want)
		}
	}
	for _, bad := range []string{`a{x="y"`, `a}`, `a{x="y}`} {
		if _, err := metricNames(bad); err == nil {
			t.Errorf("metricNames(%s): no error", bad)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
