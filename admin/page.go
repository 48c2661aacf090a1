package admin

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/signpost-proxy/signpost/learn"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
)

// The stats page is one server-rendered HTML document, in the tradition of
// HAProxy's stats page: html/template escapes every value, and the page
// reads the same with scripts off. Its script only re-fetches the page
// every few seconds and swaps in the new #stats element. Style and script
// are embedded, and the Content-Security-Policy admits exactly them.
var (
	//go:embed page/index.html
	pageHTML string
	//go:embed page/page.css
	pageCSS string
	//go:embed page/page.js
	pageJS string

	pageTemplate = template.Must(template.New("index.html").Parse(pageHTML))
	pageCSP      = "default-src 'none'; script-src " + cspHash(pageJS) + "; style-src " + cspHash(pageCSS) +
		"; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Refresh bounds for the page's ?refresh=seconds; 0 turns refreshing off.
const (
	defaultRefresh = 5
	maxRefresh     = 3600
)

// page serves the stats page.
func (a Admin) page(w http.ResponseWriter, r *http.Request) {
	refresh := defaultRefresh
	if v := r.URL.Query().Get("refresh"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			refresh = min(n, maxRefresh)
		}
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, a.pageData(time.Now(), refresh)); err != nil {
		http.Error(w, "rendering the stats page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(b.Bytes())
}

// pageData is what the page template renders; every number is formatted
// here, so that the template only places text.
type pageData struct {
	File, Upstream string
	Generated      string
	Refresh        int
	Ready          bool
	Checks         []pageCheck
	Reload         pageReload
	Routes         []*pageRoute
	Learning       bool
	Aliases        []learn.Proposal
	// Observing is set when a route, or the file, is in observe mode;
	// Answers are what enforce would have sent there, and Unexplained
	// the errors no rule explains, most frequent first.
	Observing   bool
	Answers     []observe.Answer
	Unexplained []pageUnexplained
	GatherErr   string
	Style       template.CSS
	Script      template.JS
}

type pageCheck struct {
	Name   string
	OK     bool
	Reason string
}

// pageReload describes the rules in force and the last reload.
type pageReload struct {
	Tracked   bool // reloads are tracked at all
	Attempted bool // a reload has been tried
	OK        bool
	At, Since string
	Problems  []string
}

type pageRoute struct {
	Name, Method, Path, Pos string
	Declared                bool   // in the rules in force
	Note                    string // why an undeclared route is listed
	Active                  bool   // has anything to show
	Requests                string
	Outcomes                []pageCount
	Rejections              []pageRejection
	RejectionsTotal         string
	Unmatched               []pageCount
	UnmatchedTotal          string
	Recovery                []pageBucket
	Recoveries              string // rejections whose recovery ended, either way
	Within3, Never          string // shares of Recoveries, e.g. "60%"
	// Stops is how often a caller was told to stop repeating a call that
	// failed the same way.
	Stops string
}

type pageCount struct{ Name, Count string }

// pageUnexplained is one kind of error observe mode saw no rule explain.
type pageUnexplained struct {
	Operation, Status, Text, Count, LastSeen string
}

// maxPageUnexplained bounds the unexplained errors the page lists; /draft
// has them all.
const maxPageUnexplained = 20

type pageRejection struct{ Code, Field, Count string }

type pageBucket struct {
	Label, Count, Share string
	Fraction            float64
}

func (a Admin) pageData(now time.Time, refresh int) *pageData {
	d := &pageData{Generated: now.Format("2006-01-02 15:04:05 MST"), Refresh: refresh, Ready: true,
		Style: template.CSS(pageCSS), Script: template.JS(pageJS)}
	for _, c := range a.checks() {
		pc := pageCheck{Name: c.Name, OK: c.Err == nil}
		if c.Err != nil {
			pc.Reason, d.Ready = joinLines(c.Err.Error()), false
		}
		d.Checks = append(d.Checks, pc)
	}
	if a.Reloads != nil {
		st := a.Reloads()
		d.Reload = pageReload{Tracked: true, Attempted: !st.At.IsZero(), OK: st.OK,
			At: when(st.At, now), Since: when(st.Since, now)}
		for _, p := range st.Problems {
			d.Reload.Problems = append(d.Reload.Problems, p.String())
		}
	}
	d.Aliases, d.Learning = a.aliases()
	a.observation(d, now)

	acc := map[string]*routeAcc{}
	mfs, err := a.Gatherer.Gather()
	if err != nil {
		d.GatherErr = joinLines(err.Error())
	}
	for _, mf := range mfs {
		collect(acc, mf)
	}
	seen := map[string]bool{}
	if cfg := a.config(); cfg != nil {
		d.File = cfg.File
		d.Upstream = a.upstream()
		for _, r := range cfg.Routes {
			pr := acc[r.Name].render(r.Name)
			pr.Method, pr.Path, pr.Declared = r.Method, r.Path, true
			pr.Pos = fmt.Sprintf("%s:%d:%d", cfg.File, r.Pos.Line, r.Pos.Column)
			d.Routes = append(d.Routes, pr)
			seen[r.Name] = true
		}
	}
	// Routes with series but no declaration: (unrouted), and routes a
	// reload removed.
	extra := slices.DeleteFunc(slices.Sorted(maps.Keys(acc)), func(n string) bool { return seen[n] })
	slices.SortStableFunc(extra, func(x, y string) int {
		return cmp.Compare(boolInt(x == metrics.Unrouted), boolInt(y == metrics.Unrouted))
	})
	for _, n := range extra {
		pr := acc[n].render(n)
		pr.Note = "not in the rules in force"
		if n == metrics.Unrouted {
			pr.Note = "requests no route matches"
		}
		d.Routes = append(d.Routes, pr)
	}
	return d
}

// observation fills the page's observe mode section.
func (a Admin) observation(d *pageData, now time.Time) {
	if cfg := a.config(); cfg != nil {
		d.Observing = cfg.Mode == rules.Observe
		for _, r := range cfg.Routes {
			d.Observing = d.Observing || r.Mode == rules.Observe
		}
	}
	doc, answers := a.observed()
	d.Answers = answers
	d.Observing = d.Observing || len(answers) > 0
	for _, op := range doc.Operations {
		for _, e := range op.Errors {
			d.Unexplained = append(d.Unexplained, pageUnexplained{Operation: op.Method + " " + op.Path,
				Status: strconv.Itoa(e.Status), Text: e.Text, Count: strconv.FormatInt(e.Count, 10), LastSeen: when(e.LastSeen, now)})
		}
	}
	slices.SortStableFunc(d.Unexplained, func(x, y pageUnexplained) int {
		nx, _ := strconv.Atoi(x.Count)
		ny, _ := strconv.Atoi(y.Count)
		return cmp.Compare(ny, nx)
	})
	if len(d.Unexplained) > maxPageUnexplained {
		d.Unexplained = d.Unexplained[:maxPageUnexplained]
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// when formats t with its age, or "" for the zero time.
func when(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	s := t.Format("2006-01-02 15:04:05 MST")
	if age := now.Sub(t).Round(time.Second); age > 0 {
		s += " (" + age.String() + " ago)"
	}
	return s
}

// routeAcc sums, for one route label, the series the page shows.
type routeAcc struct {
	outcomes   map[string]float64
	rejections map[[2]string]float64 // by code and field
	unmatched  map[string]float64    // by status
	// buckets are the recovery histogram's cumulative counts by upper
	// bound, summed over codes; recovered is its sample count.
	buckets     map[float64]float64
	recovered   float64
	unrecovered float64
	// stopped are the recoveries that ended with the caller told to stop;
	// stops, the answers that told a caller to stop.
	stopped, stops float64
}

func collect(acc map[string]*routeAcc, mf *dto.MetricFamily) {
	name := mf.GetName()
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		route, ok := labels["route"]
		if !ok {
			continue
		}
		get := func() *routeAcc {
			r := acc[route]
			if r == nil {
				r = &routeAcc{outcomes: map[string]float64{}, rejections: map[[2]string]float64{},
					unmatched: map[string]float64{}, buckets: map[float64]float64{}}
				acc[route] = r
			}
			return r
		}
		switch name {
		case "signpost_rejections_total":
			get().rejections[[2]string{labels["code"], labels["field"]}] += m.GetCounter().GetValue()
		case "signpost_upstream_errors_unmatched_total":
			get().unmatched[labels["status"]] += m.GetCounter().GetValue()
		case "signpost_unrecovered_total":
			get().unrecovered += m.GetCounter().GetValue()
		case "signpost_recovery_stopped_total":
			get().stopped += m.GetCounter().GetValue()
		case "signpost_repeats_stopped_total":
			get().stops += m.GetCounter().GetValue()
		case "signpost_recovery_attempts":
			r, h := get(), m.GetHistogram()
			r.recovered += float64(h.GetSampleCount())
			for _, b := range h.GetBucket() {
				r.buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
		case "signpost_request_duration_seconds":
			get().outcomes[labels["outcome"]] += float64(m.GetHistogram().GetSampleCount())
		}
	}
}

// outcomeOrder is the order outcomes are listed in.
var outcomeOrder = []string{metrics.OutcomeSuccess, metrics.OutcomeRewritten, metrics.OutcomeRejected,
	metrics.OutcomeWrapped, metrics.OutcomePassthrough, metrics.OutcomeFailed, metrics.OutcomeCancelled}

// render formats what r holds for the route called name; r may be nil.
func (r *routeAcc) render(name string) *pageRoute {
	pr := &pageRoute{Name: name, Requests: "0", RejectionsTotal: "0", UnmatchedTotal: "0", Recoveries: "0",
		Within3: "–", Never: "–", Stops: "0"}
	if r == nil {
		return pr
	}
	requests := 0.0
	names := slices.Sorted(maps.Keys(r.outcomes))
	slices.SortStableFunc(names, func(x, y string) int {
		return cmp.Compare(orderOf(outcomeOrder, x), orderOf(outcomeOrder, y))
	})
	for _, o := range names {
		if n := r.outcomes[o]; n > 0 {
			requests += n
			pr.Outcomes = append(pr.Outcomes, pageCount{o, num(n)})
		}
	}
	pr.Requests = num(requests)

	total := 0.0
	keys := slices.SortedFunc(maps.Keys(r.rejections), func(x, y [2]string) int {
		return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]))
	})
	for _, k := range keys {
		if r.rejections[k] == 0 {
			continue // a series the rules name, exported at 0 before any rejection
		}
		total += r.rejections[k]
		pr.Rejections = append(pr.Rejections, pageRejection{k[0], k[1], num(r.rejections[k])})
	}
	pr.RejectionsTotal = num(total)

	total = 0
	statuses := slices.SortedFunc(maps.Keys(r.unmatched), func(x, y string) int {
		return cmp.Or(cmp.Compare(len(x), len(y)), cmp.Compare(x, y)) // "other" after the numbers
	})
	for _, s := range statuses {
		total += r.unmatched[s]
		pr.Unmatched = append(pr.Unmatched, pageCount{s, num(r.unmatched[s])})
	}
	pr.UnmatchedTotal = num(total)

	pr.Stops = num(r.stops)
	ended := r.recovered + r.unrecovered + r.stopped
	pr.Recoveries = num(ended)
	if ended > 0 {
		pr.Recovery = r.recoveryRows(ended)
		pr.Never = percent(r.unrecovered, ended)
		if c, ok := r.buckets[3]; ok || len(r.buckets) == 0 {
			pr.Within3 = percent(c, ended) // none recovered: 0%
		}
	}
	pr.Active = requests > 0 || len(pr.Rejections) > 0 || len(pr.Unmatched) > 0 || ended > 0 || r.stops > 0
	return pr
}

// recoveryRows splits the recovery histogram into one row per bucket,
// "1", "4–5", "more than 10", then "never" for the unrecovered and "told
// to stop" for those that ended with the caller told to stop repeating a
// failing call.
func (r *routeAcc) recoveryRows(ended float64) []pageBucket {
	var rows []pageBucket
	row := func(label string, n float64) {
		rows = append(rows, pageBucket{Label: label, Count: num(n), Share: percent(n, ended), Fraction: n / ended})
	}
	lower, below := 1.0, 0.0
	for _, ub := range slices.Sorted(maps.Keys(r.buckets)) {
		c := r.buckets[ub]
		if ub > 1e300 { // +Inf, when present
			break
		}
		label := num(ub)
		if ub > lower {
			label = num(lower) + "–" + num(ub)
		}
		row(label, c-below)
		lower, below = ub+1, c
	}
	if len(rows) > 0 {
		row("more than "+num(lower-1), r.recovered-below)
	} else {
		row("any", r.recovered)
	}
	row("never", r.unrecovered)
	row("told to stop", r.stopped)
	return rows
}

func orderOf(list []string, s string) int {
	if i := slices.Index(list, s); i >= 0 {
		return i
	}
	return len(list)
}

// num formats a count: whole numbers without a fraction.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func percent(n, of float64) string {
	if of == 0 {
		return "–"
	}
	return strconv.FormatFloat(100*n/of, 'f', 0, 64) + "%"
}
