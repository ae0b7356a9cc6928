package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The index reads a file's tail in windows: lines that straddle a window, a line longer than a
// window and a torn last line give the same keys and size as reading the file whole.
func TestLineIndexSyncWindows(t *testing.T) {
	long := "k-long-" + strings.Repeat("x", 3*indexReadBytes)
	var text strings.Builder
	var want []string
	for i := 0; text.Len() < 2*indexReadBytes; i++ {
		k := "k" + strings.Repeat("y", i%977) // lengths that land on every offset of a window
		text.WriteString(k + "\n")
		want = append(want, k)
	}
	text.WriteString("\n  \n" + long + "\n")
	want = append(want, long)
	whole := int64(text.Len())
	text.WriteString("k-torn") // no newline: never a key
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte(text.String()), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(int(f.Fd()), &st))

	x := &lineIndex{keyOf: func(line []byte) string {
		if len(line) > 0 && line[0] == 'k' {
			return string(line)
		}
		return ""
	}}
	require.NoError(t, x.sync(int(f.Fd()), &st))
	assert.Equal(t, whole, x.size)
	assert.Len(t, x.keys, len(uniq(want)))
	for _, k := range want {
		_, ok := x.keys[indexKeyOf(k)]
		require.True(t, ok, "key of %d bytes missing", len(k))
	}
	_, torn := x.keys[indexKeyOf("k-torn")]
	assert.False(t, torn)
}

func uniq(s []string) map[string]bool {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}
