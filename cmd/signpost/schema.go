package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/signpost-proxy/signpost/rules"
)

// schema prints a rule file's routes as tool definitions whose input
// schemas carry the constraints its fields declare.
var schemaHelp = `Usage: signpost schema FILE [--format ` + strings.Join(rules.ToolFormats, "|") + `]

Prints the rule file's routes as tool definitions, one per route, named as the
route is. Each input schema (JSON Schema draft 2020-12) carries the enums,
formats, patterns, bounds and examples the fields declare, so that a model
reads the constraints before its first call. Hidden values are left out.

  jsonschema  {"<tool>": <schema with $schema and description>, ...}
  openai      Chat Completions tools: [{"type": "function", "function": {...}}]
  openai-strict
              the same for OpenAI's strict mode ("strict": true): every argument
              required, an optional one sent as null (signpost reads null as
              absent), no undeclared arguments, and only the keywords strict
              mode supports; the descriptions state the rules left out
  anthropic   Messages API tools: [{"name", "description", "input_schema"}]
  mcp         an MCP tools/list result: {"tools": [{"name", "description", "inputSchema"}]}

Exits 0 on success, 1 when the rule file has problems, 2 on a bad command line.`

func schema(fs *flag.FlagSet) runFunc {
	format := fs.String("format", "jsonschema", "output `format`: "+strings.Join(rules.ToolFormats, ", "))
	return func(args []string, stdout, stderr io.Writer) int {
		// Flags may follow the file: signpost schema FILE --format openai.
		var files []string
		for {
			if err := fs.Parse(args); err != nil {
				return exitUsage
			}
			if fs.NArg() == 0 {
				break
			}
			files = append(files, fs.Arg(0))
			args = fs.Args()[1:]
		}
		if !slices.Contains(rules.ToolFormats, *format) {
			fmt.Fprintf(stderr, "signpost schema: unknown --format %q; %sformats: %s\n", *format,
				didYouMean(*format, rules.ToolFormats), strings.Join(rules.ToolFormats, ", "))
			return exitUsage
		}
		switch len(files) {
		case 0:
			fmt.Fprintln(stderr, "signpost schema: name the rule file to export, e.g. signpost schema configs/tickets.yaml --format openai")
			return exitUsage
		case 1:
		default:
			fmt.Fprintf(stderr, "signpost schema: takes one rule file, got %d: %s; run it once per file\n", len(files), strings.Join(files, " "))
			return exitUsage
		}
		file := files[0]
		cfg, err := rules.Load(file)
		var ps rules.Problems
		if errors.As(err, &ps) {
			for _, p := range ps {
				fmt.Fprintln(stderr, p)
			}
			fmt.Fprintf(stderr, "%s: %d %s; no schema written\n", file, len(ps), plural(len(ps), "problem", "problems"))
			return exitFindings
		}
		out, err := cfg.MarshalTools(*format)
		if err != nil {
			fmt.Fprintf(stderr, "signpost schema: %s: %v\n", file, err)
			return exitFindings
		}
		if _, err := stdout.Write(out); err != nil {
			fmt.Fprintf(stderr, "signpost schema: writing the schema: %v\n", err)
			return exitFindings
		}
		return exitOK
	}
}
