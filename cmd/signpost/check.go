package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/signpost-proxy/signpost/rules"
)

func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "also print, per enum or catalog field, what listing its values costs in tokens and whether messages list them")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: signpost check [-v] FILE...\n\nValidates rule files and lists every problem as file:line:col: path: message.\nExits 0 when all are clean, 1 when any has a problem.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "signpost check: name at least one rule file, e.g. signpost check configs/tickets.yaml")
		return exitUsage
	}
	code := exitOK
	for _, file := range fs.Args() {
		cfg, err := rules.Load(file)
		var ps rules.Problems
		if errors.As(err, &ps) {
			for _, p := range ps {
				fmt.Fprintln(stderr, p)
			}
			fmt.Fprintf(stdout, "%s: %d %s\n", file, len(ps), plural(len(ps), "problem", "problems"))
			code = exitFindings
			continue
		}
		fields, errs := 0, 0
		for _, r := range cfg.Routes {
			fields += len(r.Fields)
			errs += len(r.Errors)
		}
		if *verbose {
			printListings(stdout, cfg)
		}
		fmt.Fprintf(stdout, "%s: ok: %d %s, %d %s, %d error %s\n", file,
			len(cfg.Routes), plural(len(cfg.Routes), "route", "routes"),
			fields, plural(fields, "field", "fields"),
			errs, plural(errs, "rule", "rules"))
	}
	return code
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
