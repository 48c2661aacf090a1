// Command signpost is a reverse proxy that turns the bare errors of a legacy
// HTTP API into bodies an LLM agent can compute its next call from.
//
// Usage:
//
//	signpost serve --config FILE [--upstream URL] [--listen ADDR] [--admin ADDR]
//	signpost check [-v] [--strict] [--format text|json] FILE...
//	signpost test [--run REGEXP] TESTFILE...
//	signpost explain --config FILE (--route NAME | --method M --path P) --status N [--body TEXT]
//	signpost schema FILE [--format jsonschema|openai|anthropic|mcp]
//	signpost import openapi SPEC [-o FILE]
//	signpost aliases --from LOGFILE [--config FILE]
//	signpost demo
//	signpost version
//	signpost healthcheck [--admin ADDR] [--ready]
//	signpost mcp --config FILE [--listen ADDR]
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK       = 0
	exitFindings = 1 // check found problems; a command failed at run time
	exitUsage    = 2 // bad command line, or serve refused a broken rule file
)

const usage = `signpost turns the bare errors of a legacy HTTP API into actionable ones.

Usage:
  signpost serve --config FILE [flags]   run the proxy (signpost serve -h lists flags)
  signpost check FILE...                 validate rule files, listing every problem and warning
  signpost test TESTFILE...              run rule unit tests, in process
  signpost explain --config FILE ...     show which rule matches an upstream error, and why not the others
  signpost schema FILE [--format F]      export routes as LLM tool definitions with their constraints
  signpost import openapi SPEC [-o FILE] write a starter rule file from an OpenAPI 3 document
  signpost aliases --from LOGFILE        propose aliases observed in signpost's logs
  signpost demo                          show a wrong call answered with and without signpost
  signpost version                       print the version
  signpost healthcheck [--ready]         probe a running signpost's /livez (or /readyz), for container health checks
  signpost mcp --config FILE             serve the routes as MCP tools, over stdio or (--listen ADDR) streamable HTTP

Each command takes -h for its flags.
`

// commands are the subcommands, in the order usage lists them.
var commands = []struct {
	name string
	run  func(args []string, stdout, stderr io.Writer) int
}{
	{"serve", serve},
	{"check", check},
	{"test", testCmd},
	{"explain", explain},
	{"schema", schema},
	{"import", importCmd},
	{"aliases", aliases},
	{"demo", demo},
	{"version", printVersion},
	{"healthcheck", healthcheck},
	{"mcp", mcpCmd},
}

// Main runs the command line args and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "--version", "-version":
		return printVersion(rest, stdout, stderr)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	names := make([]string, len(commands))
	for i, c := range commands {
		if c.name == cmd {
			return c.run(rest, stdout, stderr)
		}
		names[i] = c.name
	}
	fmt.Fprintf(stderr, "signpost: unknown command %q; %scommands: %s\n", cmd, didYouMean(cmd, names), strings.Join(names, ", "))
	return exitUsage
}
