package test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/signpost-proxy/signpost/internal/front"
	"github.com/signpost-proxy/signpost/rewrite"
)

// maxReadme is the most README.md may weigh: what signpost is, the two
// commands, putting it in front of an API and the map of docs/; the rest
// lives in docs/.
const maxReadme = 12 << 10

// generatedElsewhere are pages the docs link to that a generator writes from
// the code, relative to the module root. A link to one is accepted while the
// page is missing; once it exists, its anchors are checked like any other.
var generatedElsewhere = map[string]bool{"docs/cli.md": true}

// docPages returns README.md and every docs/*.md, relative to the module
// root.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pages {
		pages[i] = strings.TrimPrefix(filepath.ToSlash(p), "../")
	}
	return append([]string{"README.md"}, pages...)
}

// TestDocsReadmeSize holds README.md to its bound.
func TestDocsReadmeSize(t *testing.T) {
	t.Parallel()
	fi, err := os.Stat("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > maxReadme {
		t.Errorf("README.md is %d bytes, over the %d it may weigh: move a section to docs/ and link it", fi.Size(), maxReadme)
	}
}

// TestDocsLinks checks every relative link of README.md and docs/*.md: the
// file it names exists in the repository, and an anchor names a heading of
// the page it points into. Links inside code are not links.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	anchors := map[string][]string{} // page -> its heading anchors, read once
	anchorsOf := func(page string) []string {
		if a, ok := anchors[page]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join("..", page))
		if err != nil {
			t.Fatal(err)
		}
		anchors[page] = headingAnchors(string(b))
		return anchors[page]
	}
	checked := 0
	for _, page := range docPages(t) {
		b, err := os.ReadFile(filepath.Join("..", page))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(b)) {
			if external(l.target) {
				continue
			}
			checked++
			where := fmt.Sprintf("%s:%d: link %q", page, l.line, l.target)
			file, anchor, _ := strings.Cut(l.target, "#")
			target := page // a bare #anchor points into the page itself
			if file != "" {
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), file)))
			}
			if strings.HasPrefix(target, "../") {
				t.Errorf("%s leaves the repository", where)
				continue
			}
			if _, err := os.Stat(filepath.Join("..", target)); err != nil {
				if generatedElsewhere[target] {
					t.Logf("%s: %s is generated elsewhere and not here yet", where, target)
					continue
				}
				t.Errorf("%s: %s does not exist", where, target)
				continue
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s: an anchor into %s, which is not a Markdown page", where, target)
				continue
			}
			if a := anchorsOf(target); !slices.Contains(a, anchor) {
				t.Errorf("%s: %s has no heading #%s; its anchors: %s", where, target, anchor, strings.Join(a, ", "))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the link reader is broken")
	}
}

// TestDocsMap checks that the README's map names every page of docs/.
func TestDocsMap(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, l := range markdownLinks(string(b)) {
		file, _, _ := strings.Cut(l.target, "#")
		linked[filepath.ToSlash(filepath.Clean(file))] = true
	}
	for _, page := range docPages(t)[1:] {
		if !linked[page] {
			t.Errorf("README.md does not link %s: add it to the map of docs/", page)
		}
	}
	for page := range generatedElsewhere {
		if !linked[page] {
			t.Errorf("README.md does not link %s: add it to the map of docs/", page)
		}
	}
}

// TestDocsFuzzTargets checks that docs/reliability.md names every fuzz
// target of the module, with its package, as test/reliability/run.sh runs
// them all: a target the page leaves out is one whose minutes the page
// does not count.
func TestDocsFuzzTargets(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../docs/reliability.md")
	if err != nil {
		t.Fatal(err)
	}
	fuzz := regexp.MustCompile(`(?m)^func (Fuzz\w*)\(\w+ \*testing\.F\)`)
	found := 0
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../")))
		for _, m := range fuzz.FindAllSubmatch(b, -1) {
			found++
			row := fmt.Sprintf("| `%s` | `%s` |", pkg, m[1])
			if !strings.Contains(string(page), row) {
				t.Errorf("docs/reliability.md has no row %s ... for the fuzz target in %s", row, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Error("no fuzz target found under the module root")
	}
}

// link is one Markdown link: its target and the line it is on.
type link struct {
	target string
	line   int
}

// inlineLink matches [text](target) and ![alt](target), with an optional
// title after the target.
var inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// markdownLinks returns the inline links of a Markdown page, leaving out
// fenced code blocks and code spans.
func markdownLinks(md string) []link {
	var links []link
	fence := ""
	for i, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if f := fenceOpening(trimmed); f != "" {
			fence = f
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(withoutCodeSpans(line), -1) {
			links = append(links, link{target: m[1], line: i + 1})
		}
	}
	return links
}

// fenceOpening returns the fence a line opens (``` or ~~~, as long as it
// is), or "".
func fenceOpening(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// codeSpan matches a code span of one or two backticks.
var codeSpan = regexp.MustCompile("``[^`]+``|`[^`]+`")

func withoutCodeSpans(line string) string { return codeSpan.ReplaceAllString(line, "") }

// external reports whether a link target leaves the repository.
func external(target string) bool {
	return strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:")
}

// headingAnchors returns the anchors GitHub gives a page's ATX headings:
// the text lower-cased, its punctuation dropped, spaces made hyphens, and a
// repeated anchor numbered -1, -2 and on.
func headingAnchors(md string) []string {
	var anchors []string
	seen := map[string]int{}
	fence := ""
	for line := range strings.SplitSeq(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if f := fenceOpening(trimmed); f != "" {
			fence = f
			continue
		}
		hashes := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
		if hashes == 0 || hashes > 6 || !strings.HasPrefix(trimmed[hashes:], " ") {
			continue
		}
		text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(trimmed[hashes:]), "#"))
		a := slug(text)
		if n := seen[a]; n > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		anchors = append(anchors, a)
	}
	return anchors
}

// slug is GitHub's anchor for a heading's text.
func slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fencedBlocks returns the contents of the page's fenced code blocks whose
// info string is lang, each with its final newline.
func fencedBlocks(md, lang string) []string {
	var blocks []string
	var cur *strings.Builder
	fence := ""
	for line := range strings.SplitSeq(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(trimmed[len(fence):]) == "" {
				if cur != nil {
					blocks = append(blocks, cur.String())
				}
				fence, cur = "", nil
				continue
			}
			if cur != nil {
				cur.WriteString(line + "\n")
			}
			continue
		}
		if f := fenceOpening(trimmed); f != "" {
			fence = f
			if strings.TrimSpace(trimmed[len(f):]) == lang {
				cur = new(strings.Builder)
			}
		}
	}
	return blocks
}

// TestDocsOwnCodes checks signpost's own answer codes against the table of
// them in docs/response-contract.md: every code signpost answers with
// itself is listed there, and every code listed is one it answers with.
func TestDocsOwnCodes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/response-contract.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	_, table, ok := strings.Cut(page, "## Signpost's own answers")
	if !ok {
		t.Fatal(`docs/response-contract.md has no "Signpost's own answers" section`)
	}
	table, _, _ = strings.Cut(table, "\n\n## ")
	own := map[string]bool{}
	for _, c := range append(rewrite.OwnCodes(), front.RefusalCodes()...) {
		own[c] = true
		if !strings.Contains(table, "`"+c+"`") {
			t.Errorf("signpost answers with %s, which the table of docs/response-contract.md's \"Signpost's own answers\" does not list", c)
		}
	}
	row := regexp.MustCompile(`(?m)^\| [0-9x, ]+ \| (.*?) \|`)
	listed := 0
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		for _, c := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[1], -1) {
			listed++
			if !own[c[1]] {
				t.Errorf("docs/response-contract.md lists %s among signpost's own answers, which no code of signpost's is", c[1])
			}
		}
	}
	if listed < len(own) {
		t.Errorf("%d codes in the table; want at least the %d signpost answers with", listed, len(own))
	}
}
