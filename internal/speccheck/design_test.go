package speccheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const designPath = "docs/DESIGN.md"

// designRef is a citation `DESIGN.md "<section>"` (a name starting with "<" is the placeholder
// of this kind of sentence); the quoted name may run over a line break of a comment
// (designCitations joins them).
var designRef = regexp.MustCompile(`DESIGN\.md "([^"<][^"]{0,79})"`)

// commentBreak is a line break with the comment or list marker that continues the text after it.
var commentBreak = regexp.MustCompile(`\n[ \t]*(?://|#|\*)?[ \t]*`)

// designSections returns the headings (##, ###) of docs/DESIGN.md.
func designSections(text string) map[string]bool {
	out := map[string]bool{}
	for line := range strings.SplitSeq(text, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			out[strings.TrimSpace(h)] = true
		} else if h, ok := strings.CutPrefix(line, "### "); ok {
			out[strings.TrimSpace(h)] = true
		}
	}
	return out
}

// designCitations returns the section names text cites as DESIGN.md "<section>".
func designCitations(text string) []string {
	var out []string
	for _, m := range designRef.FindAllStringSubmatch(commentBreak.ReplaceAllString(text, " "), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestDesignReferencesResolve: every `DESIGN.md "<section>"` in a .go, .md or .ts file of the
// repository names a heading docs/DESIGN.md has (from a fresh-user trial: 59 citations of a
// DESIGN.md that was not in the repository).
func TestDesignReferencesResolve(t *testing.T) {
	root := repoRoot(t)
	text, err := os.ReadFile(filepath.Join(root, designPath))
	require.NoError(t, err)
	sections := designSections(string(text))
	require.Contains(t, sections, "Decisions")

	var checked int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".ts":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, name := range designCitations(string(b)) {
			checked++
			if !sections[name] {
				t.Errorf("%s: DESIGN.md %q: %s has no such section", filepath.ToSlash(rel), name, designPath)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.NotZero(t, checked, "no citation found: the scan did not reach the code")
}

// TestDesignCitations: the citation reader joins a name broken over comment lines and ignores other
// quotes.
func TestDesignCitations(t *testing.T) {
	assert.Equal(t, []string{"Trace per rollout", "Payloads travel on the span"},
		designCitations("// see DESIGN.md \"Trace per\n// rollout\" and\n\t// (DESIGN.md \"Payloads\n//   travel on the span\"), not \"x\""))
	assert.Equal(t, map[string]bool{"A": true, "B c": true}, designSections("# T\n## A\ntext\n### B c\n"))
}
