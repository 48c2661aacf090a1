package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/signpost-proxy/signpost/learn"
	"github.com/signpost-proxy/signpost/rules"
)

// aliases reads signpost's own JSON logs, from any number of replicas, and
// prints the aliases they observed as a YAML snippet for the rule file.
const aliasesHelp = `Usage: signpost aliases --from LOGFILE [--from LOGFILE...] [--config FILE] [--min-count N]

Proposes aliases from the "alias observed" lines of signpost's logs: values callers
had rejected and then replaced with a permitted one. Prints a YAML snippet to paste
into the rule file.`

func aliases(fs *flag.FlagSet) runFunc {
	var from multiFlag
	fs.Var(&from, "from", "signpost JSON log `file` to read (repeatable; - for standard input)")
	config := fs.String("config", "", "rule `file` whose declared aliases are left out, and whose learn.min_count applies")
	minCount := fs.Int("min-count", 0, "how often a pair must be seen to be proposed (default: the rule file's learn.min_count, else 3)")
	return func(args []string, stdout, stderr io.Writer) int {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		if len(from) == 0 || fs.NArg() > 0 {
			fmt.Fprintln(stderr, "signpost aliases: name the log to read, e.g. signpost aliases --from signpost.log --config configs/addresses.yaml")
			return exitUsage
		}
		var cfg *rules.Config
		min := rules.DefaultMinCount
		if *config != "" {
			var err error
			if cfg, err = rules.Load(*config); err != nil {
				fmt.Fprintln(stderr, err)
				return exitUsage
			}
			min = cfg.Learn.MinCount
		}
		if *minCount > 0 {
			min = *minCount
		}
		counts := map[learn.Pair]int{}
		lines := 0
		for _, name := range from {
			n, err := readObservations(name, counts)
			if err != nil {
				fmt.Fprintf(stderr, "signpost aliases: %v\n", err)
				return exitFindings
			}
			lines += n
		}
		var list []learn.Proposal
		declared := 0
		for p, n := range counts {
			switch {
			case n < min || p.CaseOnly():
			case cfg != nil && learn.Declared(cfg, p):
				declared++
			default:
				list = append(list, learn.Proposal{Pair: p, Count: n})
			}
		}
		slices.SortFunc(list, func(a, b learn.Proposal) int {
			return cmp.Or(cmp.Compare(a.Route, b.Route), cmp.Compare(a.Field, b.Field), cmp.Compare(b.Count, a.Count),
				cmp.Compare(a.Rejected, b.Rejected), cmp.Compare(a.Accepted, b.Accepted))
		})
		writeProposals(stdout, list, lines, min, declared)
		return exitOK
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// readObservations adds the "alias observed" lines of one log to counts and
// returns how many it found. Lines that are not signpost's JSON are skipped.
func readObservations(name string, counts map[learn.Pair]int) (int, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return 0, fmt.Errorf("cannot read the log: %w", unwrapPath(err))
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		var line struct {
			Msg, Route, Field, Rejected, Accepted string
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "alias observed" || line.Route == "" || line.Field == "" {
			continue
		}
		counts[learn.Pair{Route: line.Route, Field: line.Field, Rejected: line.Rejected, Accepted: line.Accepted}]++
		n++
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("reading %s: %w", name, err)
	}
	return n, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

func writeProposals(w io.Writer, list []learn.Proposal, observations, min, declared int) {
	fmt.Fprintf(w, "# %d %s in the logs; %d %s seen at least %d %s",
		observations, plural(observations, "alias observation", "alias observations"),
		len(list), plural(len(list), "pair", "pairs"), min, plural(min, "time", "times"))
	if declared > 0 {
		fmt.Fprintf(w, " (%d already declared, left out)", declared)
	}
	fmt.Fprintln(w, ".")
	if len(list) == 0 {
		return
	}
	fmt.Fprintln(w, "# Paste each alias under its field in the rule file.")
	fmt.Fprintln(w, "routes:")
	route, field := "", ""
	for _, p := range list {
		if p.Route != route {
			route, field = p.Route, ""
			fmt.Fprintf(w, "  %s:\n    fields:\n", p.Route)
		}
		if p.Field != field {
			field = p.Field
			fmt.Fprintf(w, "      %s:\n        aliases:\n", yamlString(p.Field))
		}
		fmt.Fprintf(w, "          %s: %s  # seen %d %s\n", yamlString(p.Rejected), yamlString(p.Accepted), p.Count, plural(p.Count, "time", "times"))
	}
}

var plainYAML = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// yamlString writes s as a YAML scalar that reads back as the same string.
func yamlString(s string) string {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return strconv.Quote(s)
	}
	if plainYAML.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}
