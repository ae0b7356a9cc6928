package agentobs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// readmeSnippetRE matches the first go block of the README's "Agent observations" section.
var readmeSnippetRE = regexp.MustCompile("(?s)\n## Agent observations\n.*?```go\n(.*?)```\n")

// TestREADMEAgentObservationsSnippet: the README's snippet is readme_snippet_test.go byte for byte
// (after its package line), so it compiles as written; and it records what it says.
func TestREADMEAgentObservationsSnippet(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	m := readmeSnippetRE.FindSubmatch(readme)
	require.NotNil(t, m, "README.md has a go block under ## Agent observations")
	src, err := os.ReadFile("readme_snippet_test.go")
	require.NoError(t, err)
	want := strings.TrimPrefix(string(src), "package agentobs_test\n\n")
	assert.Equal(t, want, string(m[1]), "README.md's snippet differs from agentobs/readme_snippet_test.go: paste it again")

	store, err := capture.NewStore(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, recordRollout(t.Context(), store))
	b, exists, err := agentobs.ReadBundle(store, "3-1")
	require.NoError(t, err)
	require.True(t, exists)
	kinds := map[string]int{}
	for _, r := range b.Records {
		kinds[r.Kind()]++
	}
	assert.Equal(t, map[string]int{"agent_invocation": 1, "tool_call": 1, "sandbox": 1, "context_compaction": 1}, kinds)
}
