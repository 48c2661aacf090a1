package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/signpost-proxy/signpost/draft"
	"github.com/signpost-proxy/signpost/observe"
	"github.com/signpost-proxy/signpost/rules"
)

const draftHelp = `Usage: signpost draft (--admin ADDRESS | --from FILE)... [--base FILE] [-o FILE] [--upstream URL]

Writes a rule file from what observe mode learned of the API: routes with the path
templates the traffic used, fields with the constraint their values support, an
error rule for each error no rule explained, with the field callers changed to get
past it, and aliases from the values they replaced. Each inference carries its
evidence as a comment; what the traffic does not make certain is left commented
out for a person to confirm. With -o, the rule tests drawn from the observed
exchanges go beside it (NAME.tests.yaml), for signpost test.

--admin reads GET /draft from a running signpost's admin listener; --from reads a
document saved from it (curl -s http://127.0.0.1:9090/draft > observed.json), or
signpost's JSON log, to which it writes what it observed as it exits. Both repeat,
and combine: the documents of several replicas, each of which observed its share of
the traffic, are merged into one before drafting.

--base starts from a rule file written by hand or by signpost import, and adds to it
what traffic taught: the routes it lacks, and on its routes the fields and error
rules they lack, each with its evidence; its own declarations stay as written.`

// maxDraftDocument bounds the document draft reads: the record's own
// bounds keep it far smaller.
const maxDraftDocument = 64 << 20

func draftCmd(fs *flag.FlagSet) runFunc {
	var admin, from multiFlag
	fs.Var(&admin, "admin", "admin `address` of a signpost in observe mode, e.g. 127.0.0.1:9090 (repeatable)")
	fs.Var(&from, "from", "a document saved from GET /draft, or signpost's JSON log (`file`, repeatable; - for standard input)")
	out := fs.String("o", "", "write the rule file to `file`, and its tests beside it; default: the rule file to standard output")
	upstream := fs.String("upstream", "", "upstream base `URL` to write into the rule file")
	base := fs.String("base", "", "a rule `file` (hand-written, or from signpost import) to add what traffic taught to")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for each admin listener")
	return func(args []string, stdout, stderr io.Writer) int {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		if len(admin)+len(from) == 0 {
			fmt.Fprintln(stderr, "signpost draft: name a source, e.g. signpost draft --admin 127.0.0.1:9090 -o draft.yaml, or signpost draft --from observed.json")
			return exitUsage
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "signpost draft: unexpected argument %q; name each document with its own --from, e.g. --from a.json --from b.json\n", fs.Arg(0))
			return exitUsage
		}
		if i := slices.Index(from, "-"); i >= 0 && slices.Contains(from[i+1:], "-") {
			fmt.Fprintln(stderr, "signpost draft: --from - given twice; standard input holds one document: save the others to files")
			return exitUsage
		}
		if *upstream != "" {
			if _, err := rules.ParseUpstream(*upstream); err != nil {
				fmt.Fprintln(stderr, "signpost draft: --upstream "+err.Error())
				return exitUsage
			}
		}
		doc, err := readDocuments(admin, from, *timeout)
		if err != nil {
			fmt.Fprintln(stderr, "signpost draft: "+err.Error())
			return exitFindings
		}
		rulesName := "draft.yaml"
		if *out != "" {
			rulesName = filepath.Base(*out)
		}
		d, err := draft.Write(doc, rulesName, draft.Options{Upstream: *upstream})
		if err != nil {
			fmt.Fprintln(stderr, "signpost draft: "+err.Error())
			return exitFindings
		}
		if *base != "" {
			text, err := os.ReadFile(*base)
			if err != nil {
				fmt.Fprintln(stderr, "signpost draft: --base "+err.Error())
				return exitFindings
			}
			if _, err := rules.Parse(*base, text); err != nil {
				fmt.Fprintln(stderr, err)
				fmt.Fprintf(stderr, "signpost draft: --base %s does not pass check; fix it first (signpost check %s)\n", *base, *base)
				return exitFindings
			}
			var added draft.Added
			if d.Rules, added, err = draft.Onto(text, d.Rules); err == nil {
				d.Tests, err = draft.RenameCalls(d.Tests, added.Renamed)
			}
			if err != nil {
				fmt.Fprintln(stderr, "signpost draft: "+err.Error())
				return exitFindings
			}
		}
		if *out == "" {
			_, _ = stdout.Write(d.Rules)
			return exitOK
		}
		tests := testsPath(*out)
		for _, f := range []struct {
			path string
			data []byte
		}{{*out, d.Rules}, {tests, d.Tests}} {
			if err := os.WriteFile(f.path, f.data, 0o644); err != nil {
				fmt.Fprintln(stderr, "signpost draft: "+err.Error())
				return exitFindings
			}
		}
		cfg, err := rules.Load(*out)
		if err != nil {
			// A draft that does not load is a fault of draft's own.
			fmt.Fprintln(stderr, err)
			fmt.Fprintf(stderr, "signpost draft: %s does not pass check\n", *out)
			return exitFindings
		}
		merged := ""
		if n := len(admin) + len(from); n > 1 {
			merged = fmt.Sprintf(", merged from %d documents", n)
		}
		fmt.Fprintf(stdout, "wrote %s (%d routes from %d operations observed%s) and %s\nnext: review the comments, then signpost check %s && signpost test %s\n",
			*out, len(cfg.Routes), len(doc.Operations), merged, tests, *out, tests)
		return exitOK
	}
}

// testsPath names the tests file written beside the rule file path:
// draft.yaml → draft.tests.yaml.
func testsPath(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".tests" + cmp.Or(ext, ".yaml")
}

// readDocuments reads the observe document of each admin listener and of
// each file, and merges them when there are several.
func readDocuments(admins, files []string, timeout time.Duration) (*observe.Document, error) {
	var docs []observe.Document
	var where []string
	for _, a := range admins {
		doc, url, err := fetchDocument(a, timeout)
		if err != nil {
			return nil, err
		}
		docs, where = append(docs, *doc), append(where, url)
	}
	for _, f := range files {
		found, name, err := openDocuments(f)
		if err != nil {
			return nil, err
		}
		for _, doc := range found {
			docs, where = append(docs, doc), append(where, name)
		}
	}
	if len(docs) == 1 {
		return &docs[0], nil
	}
	doc, err := observe.Merge(docs...)
	if err != nil {
		var me *observe.MergeError
		if errors.As(err, &me) && me.With >= 0 {
			return nil, fmt.Errorf("%s and %s: %v", where[me.With], where[me.Doc], err)
		}
		if me != nil {
			return nil, fmt.Errorf("%s: %v", where[me.Doc], err)
		}
		return nil, err
	}
	return &doc, nil
}

// fetchDocument reads the observe document from a running signpost's admin
// listener, returning it and the URL it read.
func fetchDocument(admin string, timeout time.Duration) (*observe.Document, string, error) {
	url := admin
	if !strings.Contains(url, "://") {
		url = "http://" + url
	}
	url = strings.TrimSuffix(url, "/") + "/draft"
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil}}
	res, err := c.Get(url)
	if err != nil {
		return nil, url, fmt.Errorf("cannot read %s: %w; is signpost serving with --admin %s?", url, err, admin)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, url, fmt.Errorf("GET %s answered %s; a signpost admin listener answers 200", url, res.Status)
	}
	doc, err := decodeDocument(res.Body, url)
	return doc, url, err
}

// openDocuments reads a saved observe document, or the observed lines of
// signpost's JSON log, one document per process that wrote them; - is
// standard input. It returns them and the name they go by in messages.
func openDocuments(name string) ([]observe.Document, string, error) {
	var r io.Reader = os.Stdin
	where := "standard input"
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, name, err
		}
		defer f.Close()
		r, where = f, name
	}
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := readLine(br)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, where, fmt.Errorf("reading %s: %w", where, err)
	}
	rest := io.MultiReader(bytes.NewReader(append(first, '\n')), br)
	if isLogLine(first) {
		docs, err := documentsFromLog(bufio.NewReaderSize(rest, 64<<10), where)
		return docs, where, err
	}
	doc, err := decodeDocument(rest, where)
	if err != nil {
		return nil, where, err
	}
	return []observe.Document{*doc}, where, nil
}

// decodeDocument reads one observe document from r, named where.
func decodeDocument(r io.Reader, where string) (*observe.Document, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxDraftDocument+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", where, err)
	}
	if len(data) > maxDraftDocument {
		return nil, fmt.Errorf("%s is larger than %d MiB; a document from GET /draft is far smaller", where, maxDraftDocument>>20)
	}
	var doc observe.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s is not JSON (at byte %d: %v); save the document with curl -s http://127.0.0.1:9090/draft > observed.json", where, se.Offset, err)
		}
		return nil, fmt.Errorf("%s is not a document from GET /draft: %v", where, err)
	}
	if doc.Version != observe.DocumentVersion {
		return nil, fmt.Errorf("%s has version %d; this signpost reads version %d, from GET /draft of the same release", where, doc.Version, observe.DocumentVersion)
	}
	return &doc, nil
}
