package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/signpost-proxy/signpost/rules"
)

const checkHelp = `Usage: signpost check [-v] [--strict] [--format text|json] FILE...

Validates rule files and lists every problem, and every warning (a rule that can
never match, a field nothing uses, a message over the token budget), as
file:line:col: path: message. Exits 0 when all are clean, 1 when any has a problem.`

// check validates rule files, listing every problem and warning.
func check(fs *flag.FlagSet) runFunc {
	verbose := fs.Bool("v", false, "also print, per enum or catalog field, what listing its values costs in tokens and whether messages list them")
	strict := fs.Bool("strict", false, "treat warnings as problems: exit 1 on any")
	format := fs.String("format", "text", "output `format`: text (one line per finding) or json (one array, for editors and CI)")
	return func(args []string, stdout, stderr io.Writer) int {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		if *format != "text" && *format != "json" {
			fmt.Fprintf(stderr, "signpost check: --format %q: must be text or json\n", *format)
			return exitUsage
		}
		if fs.NArg() == 0 {
			fmt.Fprintln(stderr, "signpost check: name at least one rule file, e.g. signpost check configs/tickets.yaml")
			return exitUsage
		}
		code := exitOK
		findings := []finding{}
		for _, file := range fs.Args() {
			cfg, err := rules.Load(file)
			var ps rules.Problems
			if errors.As(err, &ps) {
				findings = append(findings, asFindings(ps)...)
				if *format == "text" {
					for _, p := range ps {
						fmt.Fprintln(stderr, p)
					}
					fmt.Fprintf(stdout, "%s: %d %s\n", file, len(ps), plural(len(ps), "problem", "problems"))
				}
				code = exitFindings
				continue
			}
			warnings := cfg.Warnings()
			findings = append(findings, asFindings(warnings)...)
			if len(warnings) > 0 && *strict {
				code = exitFindings
			}
			if *format == "json" {
				continue
			}
			for _, w := range warnings {
				fmt.Fprintln(stderr, w)
			}
			if *verbose {
				printListings(stdout, cfg)
			}
			fields, errs := 0, 0
			for _, r := range cfg.Routes {
				fields += len(r.Fields)
				errs += len(r.Errors)
			}
			verdict := "ok"
			if len(warnings) > 0 {
				verdict = fmt.Sprintf("ok with %d %s", len(warnings), plural(len(warnings), "warning", "warnings"))
				if *strict {
					verdict = fmt.Sprintf("%d %s (--strict)", len(warnings), plural(len(warnings), "warning", "warnings"))
				}
			}
			fmt.Fprintf(stdout, "%s: %s: %d %s, %d %s, %d error %s\n", file, verdict,
				len(cfg.Routes), plural(len(cfg.Routes), "route", "routes"),
				fields, plural(fields, "field", "fields"),
				errs, plural(errs, "rule", "rules"))
		}
		if *format == "json" {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(findings)
		}
		return code
	}
}

// finding is one problem or warning in check's JSON output.
type finding struct {
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Severity string `json:"severity"`
	Path     string `json:"path,omitempty"`
	Message  string `json:"message"`
}

func asFindings(ps rules.Problems) []finding {
	out := make([]finding, len(ps))
	for i, p := range ps {
		sev := "error"
		if p.Warning {
			sev = "warning"
		}
		out[i] = finding{File: p.File, Line: p.Line, Column: p.Column, Severity: sev, Path: p.Path, Message: p.Message}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// printListings says, per field with a permitted set, what listing it costs
// and what messages do instead when that is over budget.
func printListings(w io.Writer, cfg *rules.Config) {
	for _, r := range cfg.Routes {
		for _, f := range r.Fields {
			if f.Enum == nil {
				continue
			}
			decision := "listed in messages"
			if !f.Listed {
				decision = fmt.Sprintf("messages state %q and did_you_mean proposes values", f.Rule)
			}
			fmt.Fprintf(w, "%s:%d:%d: routes.%s.fields.%s: %d %s, listing costs %d tokens against a budget of %d: %s\n",
				cfg.File, f.Pos.Line, f.Pos.Column, r.Name, f.Name, len(f.Enum), plural(len(f.Enum), "value", "values"),
				f.ListCost, f.ListBudget, decision)
		}
	}
}
