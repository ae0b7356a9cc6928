package speccheck

import (
	"bufio"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	module     = "module github.com/gymtrace/gymtrace"
	specPath   = "docs/SPEC.md"
	tokensPath = "docs/TOKENS.md"

	// The documents a citation can name: "SPEC §2.2" and "TOKENS.md §2.7".
	specDoc   = "SPEC.md"
	tokensDoc = "TOKENS.md"
)

// docPaths are the checked documents by name.
var docPaths = map[string]string{specDoc: specPath, tokensDoc: tokensPath}

// defaultDoc is the document a citation names when its line names none before it: TOKENS.md in
// docs/TOKENS.md itself and in package tokens (whose doc comments cite it throughout), SPEC
// everywhere else.
func defaultDoc(rel string) string {
	rel = filepath.ToSlash(rel)
	if rel == tokensPath || strings.HasPrefix(rel, "tokens/") {
		return tokensDoc
	}
	return specDoc
}

// spec is what a citation can name in one document (docs/SPEC.md, docs/TOKENS.md).
type spec struct {
	path       string             // the document, for messages
	sections   map[string]section // by number: "0", "3.1"
	deviations map[int]bool       // the Dn bullets of §0
}

// section is one heading's span, up to the next heading of the same or a higher level.
type section struct {
	text  string       // the span's text, for named paragraphs (`§0 "Durability contract"`)
	items map[int]bool // its numbered list items ("12. ", "72–74. ") and table rows ("| 12 |", "| 12? |")
}

var (
	headingRE   = regexp.MustCompile(`^(##|###|####) (\d+(?:\.\d+){0,2})[. ]`)
	deviationRE = regexp.MustCompile(`^- \*\*D(\d+) `)
	itemRE      = regexp.MustCompile(`^(\d+)(?:–(\d+))?\. |^\| (\d+)\?? \|`)
)

// parseSpec reads the sections, their items and the deviations of the document at path (its text).
func parseSpec(path, text string) spec {
	s := spec{path: path, sections: map[string]section{}, deviations: map[int]bool{}}
	type open struct {
		num   string
		level int
		text  strings.Builder
		items map[int]bool
	}
	var stack []*open
	closeTo := func(level int) {
		for len(stack) > 0 && stack[len(stack)-1].level >= level {
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			s.sections[o.num] = section{text: o.text.String(), items: o.items}
		}
	}
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		if m := headingRE.FindStringSubmatch(line); m != nil {
			level := len(m[1])
			closeTo(level)
			stack = append(stack, &open{num: m[2], level: level, items: map[int]bool{}})
		}
		if m := deviationRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			s.deviations[n] = true
		}
		var items []int
		if m := itemRE.FindStringSubmatch(line); m != nil {
			from, to := m[1], m[2]
			if m[3] != "" { // a table row
				from, to = m[3], ""
			}
			items = numbers(from, to)
		}
		for _, o := range stack {
			o.text.WriteString(line + "\n")
			for _, n := range items {
				o.items[n] = true
			}
		}
	}
	closeTo(0)
	return s
}

// ref is one citation of a document.
type ref struct {
	doc     string // the document cited: specDoc or tokensDoc
	section string // a section number, "" for a deviation
	item    int    // an item or table row of section, 0 for none
	name    string // a named paragraph of section, "" for none
	dev     int    // a deviation number, 0 for none
}

func (r ref) String() string {
	if r.doc == tokensDoc {
		r.doc = ""
		return tokensDoc + " " + r.String()
	}
	switch {
	case r.dev != 0:
		return fmt.Sprintf("D%d", r.dev)
	case r.item != 0:
		return fmt.Sprintf("§%s #%d", r.section, r.item)
	case r.name != "":
		return fmt.Sprintf("§%s %q", r.section, r.name)
	}
	return "§" + r.section
}

var (
	// tokenRE finds, left to right, a document's name and a section citation: § with a number, an
	// optional range end ("§6.3–6.7", "§4.4–§4.6") and an optional tail of items ("§8 #75–84 and
	// #90", "§3.1 #11/#13", "§8 vectors #91–#101", "§5.5 step 2") or a paragraph name (`§0 "Spans"`).
	// A citation belongs to the nearest document named before it on its line, by default the file's
	// (defaultDoc), until a ";" starts a new list: "TOKENS.md §2.7" is checked against
	// docs/TOKENS.md, "RFC 9110 §7.6.1", "Unicode §3.9" and "OTHER.md §2" are not checked.
	tokenRE = regexp.MustCompile(`\bSPEC(?:\.md)?\b|\bRFC ?\d+|\bUnicode\b|\b[A-Za-z][\w-]*\.md\b|` +
		`§ ?(\d+(?:\.\d+)*)(?:[–-]§?(\d+(?:\.\d+)*))?` +
		`(\s+(?:vectors\s+)?#\d+(?:[–-]#?\d+)?(?:(?:\s*[,/]\s*|\s+and\s+)#\d+(?:[–-]#?\d+)?)*|\s+step\s+\d+|\s?"[A-Z][A-Za-z0-9 '/-]*")?`)
	itemNumRE = regexp.MustCompile(`(\d+)(?:[–-]#?(\d+))?`)
	// devRE finds a deviation: D and a number, not inside a word or a percent escape ("%D0").
	devRE = regexp.MustCompile(`(?:^|[^%\w])D(\d{1,2})\b`)
)

// refs returns the citations of one line of a file whose default document is def. Deviations
// ("D12") are always SPEC's: TOKENS.md has none of its own.
func refs(line, def string) []ref {
	var out []ref
	if strings.Contains(line, "§") { // most lines have none: skip the slow expression
		doc, last := def, 0
		for _, at := range tokenRE.FindAllStringSubmatchIndex(line, -1) {
			m := make([]string, len(at)/2)
			for i := range m {
				if at[2*i] >= 0 {
					m[i] = line[at[2*i]:at[2*i+1]]
				}
			}
			if strings.Contains(line[last:at[0]], ";") { // "TOKENS.md §2.1; §5.5 here": a new list
				doc = def
			}
			last = at[1]
			if !strings.HasPrefix(m[0], "§") {
				switch {
				case strings.HasPrefix(m[0], "SPEC"):
					doc = specDoc
				case m[0] == tokensDoc:
					doc = tokensDoc
				default:
					doc = ""
				}
				continue
			}
			if doc == "" {
				continue
			}
			sec, end, tail := m[1], m[2], strings.TrimSpace(m[3])
			switch {
			case strings.HasPrefix(tail, `"`):
				out = append(out, ref{doc: doc, section: sec, name: strings.Trim(tail, `"`)})
			case tail != "":
				for _, im := range itemNumRE.FindAllStringSubmatch(tail, -1) {
					for _, n := range numbers(im[1], im[2]) {
						out = append(out, ref{doc: doc, section: sec, item: n})
					}
				}
			default:
				out = append(out, ref{doc: doc, section: sec})
			}
			if end != "" {
				out = append(out, ref{doc: doc, section: end})
			}
		}
	}
	if maybeDeviation(line) { // likewise
		for _, m := range devRE.FindAllStringSubmatch(line, -1) {
			n, _ := strconv.Atoi(m[1])
			out = append(out, ref{doc: specDoc, dev: n})
		}
	}
	return out
}

// maybeDeviation reports whether line has a "D" followed by a digit, the cheap test before devRE.
func maybeDeviation(line string) bool {
	for i := 0; i+1 < len(line); i++ {
		if line[i] == 'D' && '0' <= line[i+1] && line[i+1] <= '9' {
			return true
		}
	}
	return false
}

// numbers returns from, or the numbers from through to when to is not empty (both decimal).
func numbers(from, to string) []int {
	a, _ := strconv.Atoi(from)
	b := a
	if to != "" {
		b, _ = strconv.Atoi(to)
	}
	var out []int
	for n := a; n <= b; n++ {
		out = append(out, n)
	}
	return out
}

// problem says why s does not have what r names, or "" when it does.
func (s spec) problem(r ref) string {
	if r.dev != 0 {
		if !s.deviations[r.dev] {
			return fmt.Sprintf("%s: %s has no deviation D%d", r, s.path, r.dev)
		}
		return ""
	}
	sec, ok := s.sections[r.section]
	switch {
	case !ok:
		return fmt.Sprintf("%s: %s has no section §%s", r, s.path, r.section)
	case r.item != 0 && !sec.items[r.item]:
		return fmt.Sprintf("%s: §%s of %s has no item or row %d", r, r.section, s.path, r.item)
	case r.name != "" && !strings.Contains(sec.text, r.name):
		return fmt.Sprintf("%s: §%s of %s does not contain %q", r, r.section, s.path, r.name)
	}
	return ""
}

// repoRoot walks up from the working directory to the root module's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), module+"\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no directory above the test holds the root go.mod")
		dir = parent
	}
}

// TestSpecReferencesResolve scans every .go and .md file of the repository (all modules; testdata,
// hidden directories and this package, whose examples are not citations, skipped) and fails, naming
// file:line, for every citation of a section, item, paragraph or deviation that docs/SPEC.md does
// not have.
func TestSpecReferencesResolve(t *testing.T) {
	root := repoRoot(t)
	specs := map[string]spec{}
	for doc, path := range docPaths {
		text, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		specs[doc] = parseSpec(path, string(text))
	}
	s := specs[specDoc]
	for n := range 10 {
		require.Contains(t, s.sections, strconv.Itoa(n), "%s keeps sections 0–9", specPath)
	}
	for n := 1; n <= len(s.deviations); n++ {
		require.True(t, s.deviations[n], "%s numbers its deviations D1–D%d without a gap", specPath, len(s.deviations))
	}
	for n := range 9 {
		require.Contains(t, specs[tokensDoc].sections, strconv.Itoa(n), "%s keeps sections 0–8", tokensPath)
	}

	self := filepath.Join(root, "internal", "speccheck")
	var checked int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == self || path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		def := defaultDoc(rel)
		for n := 1; sc.Scan(); n++ {
			for _, r := range refs(sc.Text(), def) {
				checked++
				if p := specs[r.doc].problem(r); p != "" {
					t.Errorf("%s:%d: %s", filepath.ToSlash(rel), n, p)
				}
			}
		}
		return sc.Err()
	})
	require.NoError(t, err)
	assert.NotZero(t, checked, "no citation found: the scan did not reach the code")
}

func TestParseSpec(t *testing.T) {
	s := parseSpec(specPath, strings.Join([]string{
		"# title",
		"## 0. Deviations",
		"- **D1 first.** text",
		"- **D2 second.** more; **Durability contract** follows",
		"## 1. Ids",
		"### 1.1 Keys",
		"| # | key |",
		"| 1 | `a` |",
		"| 12? | `b` |",
		"### 1.2 Reads",
		"1. first step",
		"72–74. a range",
		"## 2. Store",
		"10. an item of §2",
	}, "\n"))

	assert.Equal(t, map[int]bool{1: true, 2: true}, s.deviations)
	assert.ElementsMatch(t, []string{"0", "1", "1.1", "1.2", "2"}, slices.Collect(maps.Keys(s.sections)))
	assert.Equal(t, map[int]bool{1: true, 12: true}, s.sections["1.1"].items)
	assert.Equal(t, map[int]bool{1: true, 72: true, 73: true, 74: true}, s.sections["1.2"].items)
	assert.Contains(t, s.sections["1"].text, "12? |", "a section's text holds its subsections")
	assert.NotContains(t, s.sections["1.1"].text, "first step", "a subsection ends at the next one")
	assert.Contains(t, s.sections["0"].text, "Durability contract")
	assert.Equal(t, map[int]bool{10: true}, s.sections["2"].items)
}

func TestRefs(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"// Append appends (SPEC §2.3, §0 D7).", []string{"§2.3", "§0", "D7"}},
		{"// see SPEC.md §3.1", []string{"§3.1"}},
		{"// continued from the line above: §6.2), kind", []string{"§6.2"}},
		{"// Claude Code (SPEC §6.3–6.7)", []string{"§6.3", "§6.7"}},
		{"// shapes §4.4–§4.6 cannot combine", []string{"§4.4", "§4.6"}},
		{"// SPEC D12 and D3/D5/D8, D1–D15", []string{"D12", "D3", "D5", "D8", "D1", "D15"}},
		{`// SPEC §0 "Durability contract": held`, []string{`§0 "Durability contract"`}},
		{`t.Run("SPEC §3.1", func(t *testing.T) { x := "b" })`, []string{"§3.1"}},
		{"// (SPEC §8 #98: refs)", []string{"§8 #98"}},
		{"// SPEC §3.1 #11/#13, D6", []string{"§3.1 #11", "§3.1 #13", "D6"}},
		{"// SPEC §8 #75–77 and #90", []string{"§8 #75", "§8 #76", "§8 #77", "§8 #90"}},
		{"// SPEC §8 vectors #91–#92 (Gym's tests)", []string{"§8 #91", "§8 #92"}},
		{"// SPEC §5.5 step 2", []string{"§5.5 #2"}},
		{"// SPEC §3.1 200 ok", []string{"§3.1"}},
		{"// hop-by-hop headers (RFC 9110 §7.6.1).", nil},
		{"// replacement (Unicode §3.9 \"U+FFFD substitution\"), which", nil},
		{"// TOKENS.md §2.1, §2.3; SPEC §2.2", []string{"TOKENS.md §2.1", "TOKENS.md §2.3", "§2.2"}},
		{"// OTHER.md §2.1; SPEC §2.2", []string{"§2.2"}},
		{"(TOKENS.md §1.7, §3.7; §5.5 here)", []string{"TOKENS.md §1.7", "TOKENS.md §3.7", "§5.5"}},
		{`request("/ng-rollout/%D0%B0bc" + chat)`, nil},
		{"x := 0xD1 // no deviation", nil},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			var got []string
			for _, r := range refs(tt.line, specDoc) {
				got = append(got, r.String())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestProblem(t *testing.T) {
	s := parseSpec(specPath, "## 0. D\n- **D1 a.** Spans here\n## 8. Vectors\n1. one\n### 8.1 Sub\n")
	tests := []struct {
		r    ref
		want string
	}{
		{ref{section: "0"}, ""},
		{ref{section: "8.1"}, ""},
		{ref{dev: 1}, ""},
		{ref{section: "8", item: 1}, ""},
		{ref{section: "0", name: "Spans"}, ""},
		{ref{section: "8.2"}, "§8.2: docs/SPEC.md has no section §8.2"},
		{ref{section: "10"}, "§10: docs/SPEC.md has no section §10"},
		{ref{dev: 2}, "D2: docs/SPEC.md has no deviation D2"},
		{ref{section: "8", item: 2}, "§8 #2: §8 of docs/SPEC.md has no item or row 2"},
		{ref{section: "0", name: "Record keys"}, `§0 "Record keys": §0 of docs/SPEC.md does not contain "Record keys"`},
	}
	for _, tt := range tests {
		t.Run(tt.r.String(), func(t *testing.T) {
			assert.Equal(t, tt.want, s.problem(tt.r))
		})
	}
}
