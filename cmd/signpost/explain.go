package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
)

// explain shows how signpost treats one upstream error: which rule of the
// route matches and why each earlier one does not, then the answer the
// caller gets. It is what a rule author runs when a rule does not fire.
const explainHelp = `Usage: signpost explain --config FILE (--route NAME | --method M --path P) --status N [--body TEXT] [--request-body TEXT] [--repeat N]

Shows which rule matches an upstream error and why each earlier rule does not,
then the answer the caller gets; with --repeat, the answer to the same call
sent N times in a row.`

func explain(fs *flag.FlagSet) runFunc {
	config := fs.String("config", "", "rule `file` (required)")
	routeName := fs.String("route", "", "route `name`; or give --method and --path")
	method := fs.String("method", "", "request `method`, e.g. PATCH")
	path := fs.String("path", "", "request `path` with query, e.g. /tickets/T-8841")
	status := fs.Int("status", 0, "upstream `status` (required), e.g. 400")
	body := fs.String("body", "", "upstream body `text`; - reads it from standard input")
	reqBody := fs.String("request-body", "", "request body `text`, for the values echoed as received")
	repeat := fs.Int("repeat", 1, "send the call this many `times` in a row, as one caller, and show the last answer: what an agent repeating it gets")
	var upHeaders, reqHeaders multiFlag
	fs.Var(&upHeaders, "header", "upstream header `Name: value` (repeatable)")
	fs.Var(&reqHeaders, "request-header", "request header `Name: value` (repeatable)")
	return func(args []string, stdout, stderr io.Writer) int {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		usage := func(msg string) int {
			fmt.Fprintf(stderr, "signpost explain: %s, e.g. signpost explain --config configs/tickets.yaml --route update_ticket --status 400 --body '{\"error\":\"Invalid status\"}'\n", msg)
			return exitUsage
		}
		switch {
		case *config == "":
			return usage("--config names the rule file")
		case *status < 100 || *status > 599:
			return usage(fmt.Sprintf("--status %d: give the upstream's status, from 100 to 599", *status))
		case *routeName == "" && (*method == "" || *path == ""):
			return usage("name the route with --route, or the request with --method and --path")
		case fs.NArg() > 0:
			return usage(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
		case *repeat < 1 || *repeat > maxRepeat:
			return usage(fmt.Sprintf("--repeat %d: send the call from 1 to %d times, e.g. --repeat 3", *repeat, maxRepeat))
		}
		cfg, err := rules.Load(*config)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitFindings
		}
		upBody := *body
		if upBody == "-" {
			b, err := io.ReadAll(os.Stdin)
			if err != nil {
				fmt.Fprintf(stderr, "signpost explain: reading the body from standard input: %v\n", err)
				return exitFindings
			}
			upBody = string(b)
		}
		up := &canned{Status: *status, Headers: map[string]string{}, Body: upBody}
		if err := parseHeaders(upHeaders, up.Headers); err != nil {
			return usage("--header " + err.Error())
		}
		rh := map[string]string{}
		if err := parseHeaders(reqHeaders, rh); err != nil {
			return usage("--request-header " + err.Error())
		}
		if *routeName != "" {
			r := cfg.Route(*routeName)
			if r == nil {
				names := make([]string, len(cfg.Routes))
				for i, x := range cfg.Routes {
					names[i] = x.Name
				}
				return usage(fmt.Sprintf("no route %q in %s; %sroutes: %s", *routeName, *config, didYouMean(*routeName, names), strings.Join(names, ", ")))
			}
			if *method == "" {
				*method = r.Method
			}
			if *path == "" {
				// Each variable stands as its own name in braces,
				// percent-encoded as a request line carries it.
				names := map[string]string{}
				for _, v := range r.PathVariables() {
					names[v.Name] = url.PathEscape("{" + v.Name + "}")
				}
				*path = r.ExpandPath(names)
			}
		}
		var reqBodyValue any
		if *reqBody != "" {
			reqBodyValue = *reqBody
			if json.Valid([]byte(*reqBody)) {
				if _, ok := rh["Content-Type"]; !ok {
					rh["Content-Type"] = "application/json"
				}
			}
		}
		req, err := newRequest(*method, *path, rh, reqBodyValue)
		if err != nil {
			return usage(err.Error())
		}
		p, err := proxy.New(cfg, proxy.Options{Upstream: &url.URL{Scheme: "http", Host: "upstream.test"}})
		if err != nil {
			fmt.Fprintf(stderr, "signpost explain: %v\n", err)
			return exitFindings
		}
		route, _ := p.RouteFor(req)
		p.Close()
		var out bytes.Buffer
		if route == nil {
			fmt.Fprintf(&out, "%s %s matches no route of %s: no rule applies; unmatched: %s decides the answer\n", req.Method, req.URL.RequestURI(), *config, cfg.Unmatched)
		} else {
			fmt.Fprintf(&out, "route %s: %s %s (%s:%d)\n", route.Name, route.Method, route.RawPath, *config, route.Pos.Line)
			describeMatches(&out, route, *status, []byte(upBody))
		}
		build := func() (*http.Request, error) { return newRequest(*method, *path, rh, reqBodyValue) }
		w, err := inProcessRepeated(cfg, build, &fakeUpstream{res: up}, *repeat)
		if err != nil {
			fmt.Fprintf(stderr, "signpost explain: %v\n", err)
			return exitFindings
		}
		if *repeat > 1 {
			fmt.Fprintf(&out, "\nsent %d times in a row, the caller gets the last time %d, %s:\n", *repeat, w.Code, w.Header().Get("Content-Type"))
		} else {
			fmt.Fprintf(&out, "\nthe caller gets %d, %s:\n", w.Code, w.Header().Get("Content-Type"))
		}
		var pretty bytes.Buffer
		if json.Indent(&pretty, w.Body.Bytes(), "", "  ") != nil {
			pretty.Reset()
			pretty.Write(w.Body.Bytes())
		}
		out.Write(pretty.Bytes())
		out.WriteString("\n")
		_, _ = stdout.Write(out.Bytes())
		return exitOK
	}
}

// describeMatches lists the route's error rules in order up to the first
// that matches, each with why it does not.
func describeMatches(out io.Writer, route *rules.Route, status int, body []byte) {
	if len(route.Errors) == 0 {
		fmt.Fprintln(out, "  the route has no error rules")
		return
	}
	b := &rules.Body{Raw: body}
	for _, e := range route.Errors {
		why := e.Match.Why(status, b)
		if why == "" {
			fmt.Fprintf(out, "  errors[%d] line %d %s: matches\n", e.Index, e.Pos.Line, e.Code)
			return
		}
		fmt.Fprintf(out, "  errors[%d] line %d %s: no, %s\n", e.Index, e.Pos.Line, e.Code, why)
	}
	fmt.Fprintln(out, "  no rule matches")
}

func parseHeaders(list []string, into map[string]string) error {
	for _, h := range list {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return errors.New(strconvQuote(h) + " is not Name: value")
		}
		into[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return nil
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
