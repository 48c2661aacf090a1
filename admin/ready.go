package admin

import (
	"errors"
	"net/http"
	"slices"
	"strings"
)

// checks are the readiness checks: rules, that a proxy is serving loaded
// rules, then those of Ready. A check of Ready's named "rules" replaces
// the built-in one.
func (a Admin) checks() []Check {
	var extra []Check
	if a.Ready != nil {
		extra = a.Ready()
	}
	if slices.ContainsFunc(extra, func(c Check) bool { return c.Name == "rules" }) {
		return extra
	}
	own := Check{Name: "rules"}
	if a.config() == nil {
		own.Err = errors.New("no rules loaded")
	}
	return append([]Check{own}, extra...)
}

// readyz answers readiness probes in the Kubernetes style: 200 "ok" when
// every check passes; with ?verbose, one line per check ("[+]rules ok",
// "[-]upstream failed: reason"); on failure, 503 with every line. Each
// ?exclude=name leaves a check out.
func (a Admin) readyz(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	_, verbose := q["verbose"]
	exclude := q["exclude"]
	var b strings.Builder
	failed := false
	for _, c := range a.checks() {
		switch {
		case slices.Contains(exclude, c.Name):
			b.WriteString("[+]" + c.Name + " excluded: ok\n")
		case c.Err != nil:
			failed = true
			b.WriteString("[-]" + c.Name + " failed: " + joinLines(c.Err.Error()) + "\n")
		default:
			b.WriteString("[+]" + c.Name + " ok\n")
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	switch {
	case failed:
		w.WriteHeader(http.StatusServiceUnavailable)
		b.WriteString("readyz check failed\n")
	case verbose:
		b.WriteString("readyz check passed\n")
	default:
		b.Reset()
		b.WriteString("ok\n")
	}
	_, _ = w.Write([]byte(b.String()))
}

// joinLines joins the lines of a multi-line reason, such as a list of rule
// problems, so that each check stays on one line.
func joinLines(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "no reason given"
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
