package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, rewriting the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), string(got))
}

// assertFits checks that no line is wider than 100 columns and none ends in a space.
func assertFits(t *testing.T, out string) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 100, "line %d is wider than 100 columns: %q", i+1, l)
		assert.False(t, strings.HasSuffix(l, " "), "line %d ends in a space: %q", i+1, l)
	}
}

func TestWriteTextGolden(t *testing.T) {
	fx := writeFixture(t)
	emptyDir := t.TempDir()
	tests := []struct {
		name   string
		golden string
		build  func() *Report
	}{
		{"with rollouts file", "report_rollouts.golden", func() *Report { return buildFixture(t, fx, Options{}) }},
		{"captures only", "report_captures.golden", func() *Report {
			rep, err := Build(t.Context(), fx.dir, Options{})
			require.NoError(t, err)
			return rep
		}},
		{"empty directory", "report_empty.golden", func() *Report {
			rep, err := Build(t.Context(), emptyDir, Options{})
			require.NoError(t, err)
			return rep
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, WriteText(&b, tt.build()))
			assertFits(t, b.String())
			golden(t, tt.golden, b.Bytes())
		})
	}
}
