// Command signpost is a reverse proxy that turns the bare errors of a legacy
// HTTP API into bodies an LLM agent can compute its next call from.
//
// Usage:
//
//	signpost serve --config FILE [--upstream URL] [--listen ADDR] [--admin ADDR]
//	signpost check FILE...
//	signpost demo
//	signpost aliases --from LOGFILE [--config FILE]
//	signpost version
package main

import (
	"fmt"
	"io"
	"os"
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
  signpost check FILE...                 validate rule files, listing every problem
  signpost demo                          show a wrong call answered with and without signpost
  signpost aliases --from LOGFILE        propose aliases observed in signpost's logs
  signpost schema FILE [--format F]      export routes as LLM tool definitions with their constraints
  signpost test TESTFILE...              run rule unit tests, in process
  signpost explain --config FILE ...     show which rule matches an upstream error, and why not the others
  signpost import openapi SPEC [-o FILE] write a starter rule file from an OpenAPI 3 document
  signpost version                       print the version

`

// Main runs the command line args and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(rest, stdout, stderr)
	case "check":
		return check(rest, stdout, stderr)
	case "demo":
		return demo(rest, stdout, stderr)
	case "aliases":
		return aliases(rest, stdout, stderr)
	case "schema":
		return schema(rest, stdout, stderr)
	case "test":
		return testCmd(rest, stdout, stderr)
	case "explain":
		return explain(rest, stdout, stderr)
	case "import":
		return importCmd(rest, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionString())
		return exitOK
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "signpost: unknown command %q; %scommands: serve, check, demo, aliases, version\n", cmd, didYouMean(cmd, []string{"serve", "check", "demo", "aliases", "version"}))
	return exitUsage
}
