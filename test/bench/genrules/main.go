// Command genrules writes a large rule file to standard output, for the
// benchmark's measure of how signpost's cost grows with its rules.
//
//	go run ./test/bench/genrules -routes 1000 -rules 10 > big.yaml
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/signpost-proxy/signpost/test/bench/rulegen"
)

func main() {
	routes := flag.Int("routes", 1000, "number of `routes`")
	rules := flag.Int("rules", 10, "error `rules` per route")
	flag.Parse()
	if err := rulegen.Write(os.Stdout, *routes, *rules); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
