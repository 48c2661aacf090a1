package test

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// learnConfig is configs/addresses.yaml with learn.min_count 2.
const learnConfig = "testdata/addresses_learn.yaml"

// catalogLine is how the address rule files in testdata name the catalog,
// relative to themselves.
const catalogLine = "catalog: ../../configs/catalogs/iso3166-alpha2.yaml"

// relocated copies the rule file at path into a temporary directory with
// each replacement (old, new, old, new...) applied once, and then its
// catalog named by absolute path, so that it still loads from there. It
// returns the copy's path.
func relocated(t *testing.T, path string, replacements ...string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := filepath.Abs("../configs/catalogs/iso3166-alpha2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	replacements = append(replacements, catalogLine, "catalog: "+catalog)
	for i := 0; i+1 < len(replacements); i += 2 {
		if !strings.Contains(text, replacements[i]) {
			t.Fatalf("%s has no %q to replace", path, replacements[i])
		}
		text = strings.Replace(text, replacements[i], replacements[i+1], 1)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// step is one call of a scripted caller and the answer it must get; the
// zero step makes no call, so that the caller waits a round.
type step struct {
	country string
	status  int
	body    string // exact; "" for a 201, whose body is the address sent
}

// rejectedAs is the step of sending country and getting invalid_country_code
// with suggestions; accepted is the step of sending a known code.
func rejectedAs(country string, suggestions ...string) step {
	return step{country, http.StatusBadRequest, unknownCountry(country, suggestions...)}
}

func accepted(country string) step { return step{country, http.StatusCreated, ""} }

// runCallers plays the callers' scripts against sp, round-robin: every
// caller's first call, then every caller's second, and so on, so that
// signpost sees their recoveries interleaved. Each caller sends its header
// pairs with every call, and each answer is checked: learning must not
// change what callers get.
func runCallers(t *testing.T, sp *signpost, callers []caller) {
	t.Helper()
	for i := 0; ; i++ {
		more := false
		for _, c := range callers {
			if i >= len(c.steps) {
				continue
			}
			more = true
			s := c.steps[i]
			if s.country == "" {
				continue // this caller sits this round out
			}
			a := address{Street: "1 High St", City: "London", CountryCode: s.country}
			got := postAddress(t, sp, a, c.header...)
			switch {
			case s.status == http.StatusCreated:
				if got.status != http.StatusCreated || string(got.body) != string(a.JSON()) {
					t.Errorf("%s, call %d (%q): %d %s, want 201 %s", c.name, i+1, s.country, got.status, got.body, a.JSON())
				}
			case got.status != s.status || string(got.body) != s.body:
				t.Errorf("%s, call %d (%q): %d %s, want %d %s", c.name, i+1, s.country, got.status, got.body, s.status, s.body)
			}
		}
		if !more {
			return
		}
	}
}

// caller is one scripted agent session.
type caller struct {
	name   string
	header []string // pairs sent with every call
	steps  []step
}

func session(id string) []string { return []string{"X-Session-Id", id} }

// learnScript is the traffic TestAliasLearning drives: three callers
// recover from "Grande Bretagne" with GB and two from "Allemagne" with DE;
// one gives up; one slips on case (no alias); one sends UK, an alias
// declared already; and one, with no session header and so known by its
// address, recovers from "España" with ES, once: below min_count. Two
// recover from "Kosovo" with XK, which is hidden: an alias leading to it
// would reveal it, and signpost check rejects one, so none is learned.
var learnScript = []caller{
	{"caller 1", session("s-1"), []step{rejectedAs("Grande Bretagne"), accepted("GB")}},
	{"caller 2", session("s-2"), []step{rejectedAs("Grande Bretagne"), accepted("GB")}},
	{"caller 3", session("s-3"), []step{rejectedAs("Grande Bretagne"), accepted("GB")}},
	{"caller 4", session("s-4"), []step{rejectedAs("Allemagne"), accepted("DE")}},
	{"caller 5", session("s-5"), []step{rejectedAs("Allemagne"), accepted("DE")}},
	{"caller 6", session("s-6"), []step{rejectedAs("Allemagne")}},
	{"caller 7", session("s-7"), []step{rejectedAs("gb", "GB"), accepted("GB")}},
	{"caller 8", session("s-8"), []step{rejectedAs("UK", "GB"), accepted("GB")}},
	{"caller 9", nil, []step{rejectedAs("España"), accepted("ES")}},
	{"caller 10", session("s-10"), []step{rejectedAs("Kosovo"), accepted("XK")}},
	{"caller 11", session("s-11"), []step{rejectedAs("Kosovo"), accepted("XK")}},
}

// learnedAliases is what GET /aliases lists after learnScript: pairs seen
// at least twice, most frequent first; no case slip, no declared alias, no
// hidden value.
const learnedAliases = `{"aliases":[` +
	`{"route":"create_address","field":"country_code","alias":"Grande Bretagne","value":"GB","count":3},` +
	`{"route":"create_address","field":"country_code","alias":"Allemagne","value":"DE","count":2}]}` + "\n"

// The snippets signpost aliases prints for learnScript's logs, at the rule
// file's min_count (2) and at 1. Seven observations were logged: three,
// two, UK (declared) and España, which YAML needs quoted.
const (
	aliasSnippet = "# 7 alias observations in the logs; 2 pairs seen at least 2 times.\n" +
		"# Paste each alias under its field in the rule file.\n" +
		"routes:\n" +
		"  create_address:\n" +
		"    fields:\n" +
		"      country_code:\n" +
		"        aliases:\n" +
		"          \"Grande Bretagne\": GB  # seen 3 times\n" +
		"          Allemagne: DE  # seen 2 times\n"
	aliasSnippetMin1 = "# 7 alias observations in the logs; 3 pairs seen at least 1 time (1 already declared, left out).\n" +
		"# Paste each alias under its field in the rule file.\n" +
		"routes:\n" +
		"  create_address:\n" +
		"    fields:\n" +
		"      country_code:\n" +
		"        aliases:\n" +
		"          \"Grande Bretagne\": GB  # seen 3 times\n" +
		"          Allemagne: DE  # seen 2 times\n" +
		"          \"España\": ES  # seen 1 time\n"
)

// TestAliasLearning drives scripted callers through signpost in front of
// the address book API with learning on (testdata/addresses_learn.yaml),
// then reads what signpost learned: from the admin listener's /aliases,
// and from its logs, split as if two replicas had written them, with
// signpost aliases. The snippet that prints pastes into the rule file,
// which then loads, and the pasted aliases answer the next caller.
func TestAliasLearning(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, addressAPI())
	sp := startSignpost(t, learnConfig, up.URL)
	runCallers(t, sp, learnScript)

	// Observations are logged before the answer is sent, and written by
	// the log's writer in batches: wait, bounded, until all seven are.
	sp.waitLog(t, "alias observed", map[string]any{"rejected": "Grande Bretagne", "accepted": "GB", "count": 3.0})
	for deadline := time.Now().Add(5 * time.Second); strings.Count(sp.stdout.String(), `"msg":"alias observed"`) < 7 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}

	got := send(t, "GET", sp.Admin+"/aliases", nil)
	if got.status != http.StatusOK || string(got.body) != learnedAliases || got.header.Get("Content-Type") != jsonType {
		t.Errorf("GET /aliases: %d %s %s\nwant 200 %s %s", got.status, got.header.Get("Content-Type"), got.body, jsonType, learnedAliases)
	}

	// Two replicas' logs: observations dealt alternately, the rest to a.
	dir := t.TempDir()
	all := sp.stdout.String()
	var a, b strings.Builder
	seen := 0
	for _, line := range strings.SplitAfter(all, "\n") {
		if strings.Contains(line, `"msg":"alias observed"`) {
			seen++
			if seen%2 == 0 {
				b.WriteString(line)
				continue
			}
		}
		a.WriteString(line)
	}
	if seen != 7 {
		t.Errorf("%d \"alias observed\" log lines, want 7:\n%s", seen, all)
	}
	allLog, aLog, bLog := filepath.Join(dir, "signpost.log"), filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	for name, text := range map[string]string{allLog: all, aLog: a.String(), bLog: b.String()} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"one log", []string{"--from", allLog, "--config", learnConfig}, aliasSnippet},
		{"two replicas", []string{"--from", aLog, "--from", bLog, "--config", learnConfig}, aliasSnippet},
		{"min count 1", []string{"--from", aLog, "--from", bLog, "--config", learnConfig, "--min-count", "1"}, aliasSnippetMin1},
	} {
		out, errOut, code := runCLI(t, append([]string{"aliases"}, tt.args...)...)
		if code != 0 || errOut != "" || out != tt.want {
			t.Errorf("%s: signpost aliases %v: exit %d, stderr %q, stdout:\n%s\nwant exit 0 and:\n%s", tt.name, tt.args, code, errOut, out, tt.want)
		}
	}
	missing := filepath.Join(dir, "c.log")
	if out, errOut, code := runCLI(t, "aliases", "--from", aLog, "--from", missing); code != 1 || out != "" || !strings.Contains(errOut, missing) {
		t.Errorf("signpost aliases with a missing log: exit %d, stdout %q, stderr %q; want 1, nothing, and the log named", code, out, errOut)
	}

	// The snippets are YAML, and read back as the aliases learned.
	for snippet, want := range map[string]map[string]string{
		aliasSnippet:     {"Grande Bretagne": "GB", "Allemagne": "DE"},
		aliasSnippetMin1: {"Grande Bretagne": "GB", "Allemagne": "DE", "España": "ES"},
	} {
		var doc struct {
			Routes map[string]struct {
				Fields map[string]struct {
					Aliases map[string]string
				}
			}
		}
		if err := yaml.Unmarshal([]byte(snippet), &doc); err != nil {
			t.Fatalf("the snippet is not YAML: %v\n%s", err, snippet)
		}
		if got := doc.Routes["create_address"].Fields["country_code"].Aliases; !reflect.DeepEqual(got, want) {
			t.Errorf("the snippet's aliases for create_address.country_code = %q, want %q", got, want)
		}
	}

	// Pasted under country_code, the longer snippet loads.
	_, aliasLines, ok := strings.Cut(aliasSnippetMin1, "        aliases:\n")
	if !ok {
		t.Fatalf("the snippet has no aliases: line:\n%s", aliasSnippetMin1)
	}
	pasted := relocated(t, learnConfig, catalogLine, catalogLine+"\n        aliases:\n"+aliasLines)
	out, errOut, code := runCLI(t, "check", pasted)
	if wantOut := pasted + ": ok: 1 route, 3 fields, 2 error rules\n"; code != 0 || errOut != "" || out != wantOut {
		t.Fatalf("signpost check on the pasted rule file: exit %d, stderr %q, stdout %q; want 0 and %q", code, errOut, out, wantOut)
	}

	// And the next callers are told what the earlier ones found out. They
	// recover at once, twice from "Grande Bretagne", but nothing is
	// proposed: each alias is declared now.
	next := startSignpost(t, pasted, up.URL)
	runCallers(t, next, []caller{
		{"caller 12", session("s-12"), []step{rejectedAs("Grande Bretagne", "GB"), accepted("GB")}},
		{"caller 13", session("s-13"), []step{rejectedAs("Grande Bretagne", "GB"), accepted("GB")}},
		{"caller 14", session("s-14"), []step{rejectedAs("allemagne", "DE"), accepted("DE")}},
		{"caller 15", session("s-15"), []step{rejectedAs("ESPAÑA", "ES"), accepted("ES")}},
	})
	next.waitLog(t, "alias observed", map[string]any{"rejected": "Grande Bretagne", "count": 2.0})
	next.waitLog(t, "alias observed", map[string]any{"rejected": "ESPAÑA", "accepted": "ES"})
	if got := send(t, "GET", next.Admin+"/aliases", nil); string(got.body) != `{"aliases":[]}`+"\n" {
		t.Errorf("GET /aliases after the pasted aliases: %s, want none: each is declared now", got.body)
	}
}

// TestAliasLearningCallerHeader sets learn.caller_header: callers are told
// apart by it, not by X-Session-Id. Two agents share a session id; one has
// "Angleterre" rejected, the other then succeeds with FR, and only the
// first one's own recovery, with GB, is an observation.
func TestAliasLearningCallerHeader(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, addressAPI())
	config := relocated(t, learnConfig, "min_count: 2", "caller_header: X-Agent\n  min_count: 1")
	sp := startSignpost(t, config, up.URL)
	agent := func(id string) []string { return []string{"X-Agent", id, "X-Session-Id", "shared"} }
	runCallers(t, sp, []caller{
		{"agent a", agent("a"), []step{rejectedAs("Angleterre"), {}, accepted("GB")}},
		{"agent b", agent("b"), []step{{}, accepted("FR")}},
	})
	sp.waitLog(t, "alias observed", map[string]any{"rejected": "Angleterre", "accepted": "GB"})
	want := `{"aliases":[{"route":"create_address","field":"country_code","alias":"Angleterre","value":"GB","count":1}]}` + "\n"
	if got := send(t, "GET", sp.Admin+"/aliases", nil); string(got.body) != want {
		t.Errorf("GET /aliases: %s, want %s", got.body, want)
	}
}
