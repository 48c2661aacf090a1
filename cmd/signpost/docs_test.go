package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// cliDocs is the command-line reference, rendered from the commands' own
// flag sets.
const cliDocs = "../../docs/cli.md"

// TestCLIDocs renders the command-line reference from the command table
// and each command's flag set, and compares it with docs/cli.md, which
// must be rewritten when a command or a flag changes:
//
//	go test ./cmd/signpost -run TestCLIDocs -update
func TestCLIDocs(t *testing.T) {
	got := renderCLIDocs()
	if *update {
		if err := os.WriteFile(cliDocs, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(cliDocs)
	if err != nil {
		t.Fatalf("%v; write it with: go test ./cmd/signpost -run TestCLIDocs -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/cli.md is stale; rewrite it with: go test ./cmd/signpost -run TestCLIDocs -update\n%s", lineDiff(string(want), string(got)))
	}
}

// TestCLIDocsListEverything: the reference names every command, its usage
// line and every flag with its default.
func TestCLIDocsListEverything(t *testing.T) {
	doc := string(renderCLIDocs())
	for i := range commands {
		c := &commands[i]
		fs, _ := c.flagSet(io.Discard)
		usageLine, _, _ := strings.Cut(c.help, "\n")
		for _, want := range []string{"\n## signpost " + c.name + "\n", usageLine} {
			if !strings.Contains(doc, want) {
				t.Errorf("the reference lacks %q", want)
			}
		}
		fs.VisitAll(func(f *flag.Flag) {
			if row := "| `" + flagName(f) + "` | " + defaultText(f) + " | "; !strings.Contains(doc, row) {
				t.Errorf("the reference lacks %s's row %q", c.name, row)
			}
		})
	}
}

// renderCLIDocs writes docs/cli.md: signpost's usage, then per command its
// help and a table of its flags.
func renderCLIDocs() []byte {
	var b bytes.Buffer
	b.WriteString("# The signpost command line\n\n")
	b.WriteString("<!-- Rendered from the commands' flag sets; do not edit. Rewrite it with: go test ./cmd/signpost -run TestCLIDocs -update -->\n\n")
	b.WriteString(strings.TrimSuffix(usageHead, "\n\nUsage:\n") + "\n\n")
	b.WriteString("| Command | What it does |\n| --- | --- |\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "| [`signpost %s`](#signpost-%s) | %s |\n", cell(c.synopsis), c.name, cell(c.summary))
	}
	b.WriteString("\nEach command takes `-h` for its help. A flag is written `-name` or `--name`; a value follows it\nas `--name value` or `--name=value`, a boolean's as `--name=false`.\n")
	for i := range commands {
		c := &commands[i]
		fmt.Fprintf(&b, "\n## signpost %s\n\n```text\n%s\n```\n", c.name, c.help)
		fs, _ := c.flagSet(io.Discard)
		if !hasFlags(fs) {
			continue
		}
		b.WriteString("\n| Flag | Default | Meaning |\n| --- | --- | --- |\n")
		fs.VisitAll(func(f *flag.Flag) {
			_, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", flagName(f), defaultText(f), cell(usage))
		})
	}
	return b.Bytes()
}

// flagName is how a flag is written with its value: -v, --config file.
// One letter takes one dash, as the commands' help writes it.
func flagName(f *flag.Flag) string {
	dashes := "--"
	if len(f.Name) == 1 {
		dashes = "-"
	}
	if value, _ := flag.UnquoteUsage(f); value != "" {
		return dashes + f.Name + " " + value
	}
	return dashes + f.Name
}

// defaultText is a flag's default as a table cell: unset when empty.
func defaultText(f *flag.Flag) string {
	if f.DefValue == "" {
		return "unset"
	}
	return "`" + cell(f.DefValue) + "`"
}

// cell escapes text for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
