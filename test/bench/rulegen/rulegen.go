// Package rulegen writes large rule files, to measure how signpost's cost
// grows with the number of routes and rules.
package rulegen

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

var methods = []string{"GET", "PATCH", "PUT", "DELETE", "POST"}

// Write writes a rule file of routes routes with rulesPerRoute error rules
// each. The last two routes are the benchmark's ticket routes, GET and
// PATCH /tickets/{ticket_id}, so that a request to them tries every other
// route first wherever routing is a linear walk; the others are spread over
// /api/v1/resNNNN/{id} with every method.
func Write(w io.Writer, routes, rulesPerRoute int) error {
	if routes < 2 || rulesPerRoute < 1 {
		return fmt.Errorf("rulegen: %d routes with %d rules each; want at least 2 routes and 1 rule", routes, rulesPerRoute)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# Generated: %d routes with %d error rules each.\nupstream: http://127.0.0.1:18101\nroutes:\n", routes, rulesPerRoute)
	for i := range routes - 2 {
		m := methods[i%len(methods)]
		fmt.Fprintf(bw, "  res%04d_%s:\n    method: %s\n    path: /api/v1/res%04d/{id}\n", i, strings.ToLower(m), m, i)
		bw.WriteString("    fields:\n      id: {pattern: '^R-[0-9]+$', example: R-1}\n      status: {enum: [open, pending, closed]}\n")
		bw.WriteString("    errors:\n")
		for k := range rulesPerRoute {
			writeRule(bw, k)
		}
	}
	bw.WriteString("  get_ticket:\n    method: GET\n    path: /tickets/{ticket_id}\n")
	bw.WriteString("    fields:\n      ticket_id: {pattern: '^T-[0-9]+$', example: T-8841}\n")
	bw.WriteString("    errors:\n")
	for k := range rulesPerRoute {
		writeRule(bw, k)
	}
	bw.WriteString("  update_ticket:\n    method: PATCH\n    path: /tickets/{ticket_id}\n")
	bw.WriteString("    fields:\n      ticket_id: {pattern: '^T-[0-9]+$', example: T-8841}\n      status: {enum: [open, pending, closed]}\n")
	bw.WriteString("    errors:\n")
	// The benchmark's rewritten 400 matches the last rule, after every
	// other rule of the route has been tried.
	for k := range rulesPerRoute - 1 {
		writeRule(bw, k)
	}
	bw.WriteString("      - match: {status: 400, json: error, equals: Invalid status}\n        code: invalid_status\n        field: status\n")
	return bw.Flush()
}

// writeRule writes the k-th filler rule: a status, a body test and a code
// of its own.
func writeRule(w *bufio.Writer, k int) {
	status := []int{400, 404, 409, 422, 429}[k%5]
	fmt.Fprintf(w, "      - match: {status: %d, json: error, equals: Failure number %d}\n        code: failure_%d\n        message: failure number %d happened\n", status, k, k, k)
	if status == 429 {
		w.WriteString("        retryable: true\n")
	}
}
