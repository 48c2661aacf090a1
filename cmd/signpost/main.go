// Command signpost is a reverse proxy that turns the bare errors of a legacy
// HTTP API into bodies an LLM agent can compute its next call from.
//
// Usage:
//
//	signpost serve --config FILE [--upstream URL] [--listen ADDR] [--admin ADDR]
//	signpost check [-v] [--strict] [--format text|json] FILE...
//	signpost test [--run REGEXP] TESTFILE...
//	signpost explain --config FILE (--route NAME | --method M --path P) --status N [--body TEXT]
//	signpost schema FILE [--format jsonschema|openai|openai-strict|anthropic|mcp]
//	signpost import openapi SPEC [-o FILE]
//	signpost aliases --from LOGFILE [--config FILE]
//	signpost demo
//	signpost version
//	signpost healthcheck [--admin ADDR] [--ready]
//	signpost mcp --config FILE [--listen ADDR]
//
// docs/cli.md lists every command with its flags, their defaults and help.
package main

// docs/cli.md is rendered from the commands' flag sets.
//go:generate go test . -run ^TestCLIDocs$ -update

import (
	"flag"
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

// usageHead and usageTail frame the list of commands in signpost's usage.
const (
	usageHead = "signpost turns the bare errors of a legacy HTTP API into actionable ones.\n\nUsage:\n"
	usageTail = "\nEach command takes -h for its flags.\n"
)

// runFunc runs a command once its flags are defined, given the arguments
// that follow its name.
type runFunc func(args []string, stdout, stderr io.Writer) int

// command is one subcommand: its line in signpost's usage, its help, and
// how it defines its flags and runs.
type command struct {
	name string
	// synopsis is how signpost's usage shows the command called, after
	// "signpost "; summary is what it says the command does.
	synopsis, summary string
	// help is what -h prints above the flags: the usage line, then what
	// the command does.
	help string
	// define defines the command's flags on fs and returns what runs it;
	// the reference in docs/cli.md is rendered from the same flag set.
	define func(fs *flag.FlagSet) runFunc
}

// commands are the subcommands, in the order usage lists them.
var commands = []command{
	{"serve", "serve --config FILE [flags]", "run the proxy (signpost serve -h lists flags)", serveHelp, serve},
	{"check", "check FILE...", "validate rule files, listing every problem and warning", checkHelp, check},
	{"test", "test TESTFILE...", "run rule unit tests, in process", testHelp, testCmd},
	{"explain", "explain --config FILE ...", "show which rule matches an upstream error, and why not the others", explainHelp, explain},
	{"schema", "schema FILE [--format F]", "export routes as LLM tool definitions with their constraints", schemaHelp, schema},
	{"import", "import openapi SPEC [-o FILE]", "write a starter rule file from an OpenAPI 3 or Swagger 2.0 document", importHelp, importCmd},
	{"draft", "draft --admin ADDRESS... [-o FILE]", "write a rule file from what observe mode learned of the API", draftHelp, draftCmd},
	{"aliases", "aliases --from LOGFILE", "propose aliases observed in signpost's logs", aliasesHelp, aliases},
	{"demo", "demo", "show a wrong call answered with and without signpost", demoHelp, demo},
	{"version", "version", "print the version", versionHelp, printVersion},
	{"healthcheck", "healthcheck [--ready]", "probe a running signpost's /livez (or /readyz), for container health checks", healthcheckHelp, healthcheck},
	{"mcp", "mcp --config FILE", "serve the routes as MCP tools, over stdio or (--listen ADDR) streamable HTTP", mcpHelp, mcpCmd},
}

// usage is signpost's own help: every command, how it is called and what
// it does.
func usage() string {
	var b strings.Builder
	b.WriteString(usageHead)
	width := 0
	for _, c := range commands {
		width = max(width, len("signpost "+c.synopsis))
	}
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-*s %s\n", width, "signpost "+c.synopsis, c.summary)
	}
	b.WriteString(usageTail)
	return b.String()
}

// flagSet is c's flag set, its flags defined, writing errors and help to
// w; it returns what runs c.
func (c *command) flagSet(w io.Writer) (*flag.FlagSet, runFunc) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), c.help)
		if hasFlags(fs) {
			fmt.Fprintln(fs.Output(), "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs, c.define(fs)
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// Main runs the command line args and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "--version", "-version":
		name = "version"
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage())
		return exitOK
	}
	names := make([]string, len(commands))
	for i := range commands {
		if c := &commands[i]; c.name == name {
			_, run := c.flagSet(stderr)
			return run(rest, stdout, stderr)
		}
		names[i] = commands[i].name
	}
	fmt.Fprintf(stderr, "signpost: unknown command %q; %scommands: %s\n", name, didYouMean(name, names), strings.Join(names, ", "))
	return exitUsage
}
