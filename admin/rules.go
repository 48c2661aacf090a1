package admin

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/signpost-proxy/signpost/rules"
)

// The shape of GET /rules: the rules in force as the proxy compiled them,
// each with its position in the rule file.
type (
	rulesDoc struct {
		File     string `json:"file"`
		Upstream string `json:"upstream"`
		// Loaded is when the rules were loaded, when reloads are tracked.
		Loaded *time.Time   `json:"loaded,omitempty"`
		Routes []rulesRoute `json:"routes"`
	}
	rulesRoute struct {
		Name      string           `json:"name"`
		Method    string           `json:"method"`
		Path      string           `json:"path"`
		Validate  rules.Mode       `json:"validate"`
		Format    rules.BodyFormat `json:"format"`
		Unmatched rules.Policy     `json:"unmatched"`
		Line      int              `json:"line"`
		Column    int              `json:"column"`
		Fields    []rulesField     `json:"fields"`
		Errors    []rulesError     `json:"errors"`
	}
	rulesField struct {
		Name     string         `json:"name"`
		In       rules.Location `json:"in"`
		Key      string         `json:"key"`
		Required bool           `json:"required"`
		Rule     string         `json:"rule,omitempty"`
		Line     int            `json:"line"`
		Column   int            `json:"column"`
	}
	rulesError struct {
		Index int    `json:"index"`
		Code  string `json:"code"`
		Field string `json:"field,omitempty"`
		// Status is the set of statuses matched, as "400, 404" or "5xx".
		Status     string  `json:"status"`
		JSON       string  `json:"json,omitempty"`
		Equals     *string `json:"equals,omitempty"`
		Contains   *string `json:"contains,omitempty"`
		Regex      string  `json:"regex,omitempty"`
		Body       string  `json:"body,omitempty"`
		Message    string  `json:"message"`
		NextCall   string  `json:"next_call,omitempty"`
		Futile     string  `json:"futile,omitempty"`
		Retryable  *bool   `json:"retryable,omitempty"`
		RetryAfter int     `json:"retry_after,omitempty"`
		Line       int     `json:"line"`
		Column     int     `json:"column"`
	}
)

// rules serves the rules in force as JSON, or 503 when none are loaded.
func (a Admin) rules(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	cfg := a.config()
	if cfg == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":"no_rules","message":"no rules are loaded"}` + "\n"))
		return
	}
	doc := describeRules(cfg)
	doc.Upstream = a.upstream()
	if a.Reloads != nil {
		if since := a.Reloads().Since; !since.IsZero() {
			doc.Loaded = &since
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(doc)
}

func describeRules(cfg *rules.Config) rulesDoc {
	doc := rulesDoc{File: cfg.File, Routes: make([]rulesRoute, 0, len(cfg.Routes))}
	if cfg.Upstream != nil {
		doc.Upstream = cfg.Upstream.String()
	}
	for _, r := range cfg.Routes {
		rr := rulesRoute{Name: r.Name, Method: r.Method, Path: r.RawPath, Validate: r.Validate, Format: r.Format,
			Unmatched: r.Unmatched, Line: r.Pos.Line, Column: r.Pos.Column,
			Fields: make([]rulesField, 0, len(r.Fields)), Errors: make([]rulesError, 0, len(r.Errors))}
		for _, f := range r.Fields {
			rr.Fields = append(rr.Fields, rulesField{Name: f.Name, In: f.In, Key: f.Key, Required: f.Required,
				Rule: f.Rule, Line: f.Pos.Line, Column: f.Pos.Column})
		}
		for _, e := range r.Errors {
			re := rulesError{Index: e.Index, Code: e.Code, Status: e.Match.Status.String(), JSON: e.Match.JSON,
				Equals: e.Match.Equals, Contains: e.Match.Contains, Message: e.Message, Futile: e.Futile,
				Retryable: e.Retryable, RetryAfter: e.RetryAfter, Line: e.Pos.Line, Column: e.Pos.Column}
			if e.Field != nil {
				re.Field = e.Field.Name
			}
			if e.Match.Regex != nil {
				re.Regex = e.Match.Regex.String()
			}
			if e.Match.Body != nil {
				re.Body = e.Match.Body.String()
			}
			if e.NextCall != nil {
				re.NextCall = e.NextCall.Signature()
			}
			rr.Errors = append(rr.Errors, re)
		}
		doc.Routes = append(doc.Routes, rr)
	}
	return doc
}
