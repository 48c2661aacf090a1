package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/signpost-proxy/signpost/rules"
	"gopkg.in/yaml.v3"
)

var bodyCases = flag.String("bodies.cases", "../../configs/tests/*.yaml",
	"the test files whose error bodies BenchmarkShippedErrorBodies measures, a glob")

// BenchmarkShippedErrorBodies runs every case of the shipped rule tests and
// reports what their error bodies cost an agent: the median and 90th
// percentile of o200k_base tokens and of bytes, over the cases answered
// with a status of 400 or more. What a body costs is what the contract
// trades against what it says; this is the figure to hold steady.
func BenchmarkShippedErrorBodies(b *testing.B) {
	files, _ := filepath.Glob(*bodyCases)
	if len(files) == 0 {
		b.Fatalf("no test files match %s", *bodyCases)
	}
	type loaded struct {
		cfg   *rules.Config
		cases []testCase
	}
	var all []loaded
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		var tf testFile
		if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&tf); err != nil {
			b.Fatalf("%s: %v", file, err)
		}
		cfg, err := rules.Load(filepath.Join(filepath.Dir(file), tf.Rules))
		if err != nil {
			b.Fatalf("%s: %v", file, err)
		}
		all = append(all, loaded{cfg, tf.Tests})
	}
	var tokens, sizes []int
	for i := 0; i < b.N; i++ {
		tokens, sizes = tokens[:0], sizes[:0]
		for _, l := range all {
			for j := range l.cases {
				tc := &l.cases[j]
				req, err := newRequest(tc.Request.Method, tc.Request.Path, tc.Request.Headers, tc.Request.Body)
				if err != nil {
					b.Fatalf("%s: %v", tc.Name, err)
				}
				w, err := inProcess(l.cfg, req, &fakeUpstream{res: tc.Upstream})
				if err != nil {
					b.Fatalf("%s: %v", tc.Name, err)
				}
				if w.Code < 400 {
					continue
				}
				tokens = append(tokens, rules.Tokens(w.Body.String()))
				sizes = append(sizes, w.Body.Len())
			}
		}
	}
	if len(tokens) == 0 {
		b.Fatal("no case was answered with an error")
	}
	slices.Sort(tokens)
	slices.Sort(sizes)
	b.ReportMetric(float64(len(tokens)), "bodies")
	b.ReportMetric(float64(percentile(tokens, 50)), "p50-tokens")
	b.ReportMetric(float64(percentile(tokens, 90)), "p90-tokens")
	b.ReportMetric(float64(percentile(sizes, 50)), "p50-bytes")
	b.ReportMetric(float64(percentile(sizes, 90)), "p90-bytes")
}

// percentile is the nearest-rank p-th percentile of sorted.
func percentile(sorted []int, p int) int {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}
