package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guideFile is the TypeScript file whose regions the README includes.
const guideFile = "e2e/ts/src/guide.ts"

var (
	// guideRegionRE matches one `// #region guide-NAME` … `// #endregion` block of the guide file.
	guideRegionRE = regexp.MustCompile(`(?s)// #region (guide-[a-z-]+)\n(.*?)// #endregion\n`)
	// readmeIncludeRE matches an include in the README: the marker line naming a region, then the
	// fenced ts block that must hold it.
	readmeIncludeRE = regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(guideFile) + "#(guide-[a-z-]+) -->\n```ts\n(.*?)```\n")
)

// TestTypeScriptGuideInREADME checks the README's TypeScript guide ("Agents in any language") is
// the code TestTypeScriptClients and TestTypeScriptAgent run: every region of e2e/ts/src/guide.ts
// appears in the README exactly once, byte for byte, and the README includes nothing else from it.
func TestTypeScriptGuideInREADME(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", guideFile))
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)

	regions := map[string]string{}
	var names []string
	for _, m := range guideRegionRE.FindAllStringSubmatch(string(guide), -1) {
		require.NotContains(t, regions, m[1], "region %s appears twice in %s", m[1], guideFile)
		regions[m[1]] = m[2]
		names = append(names, m[1])
	}
	require.NotEmpty(t, regions, "%s has guide regions", guideFile)

	var included []string
	for _, m := range readmeIncludeRE.FindAllStringSubmatch(string(readme), -1) {
		want, ok := regions[m[1]]
		if !assert.True(t, ok, "README.md includes %s#%s, which the file does not have", guideFile, m[1]) {
			continue
		}
		assert.Equal(t, want, m[2], "README.md's copy of %s#%s differs from the file: paste the region again", guideFile, m[1])
		included = append(included, m[1])
	}
	assert.Equal(t, names, included, "README.md includes every region of %s once, in file order", guideFile)
	markers := regexp.MustCompile(regexp.QuoteMeta("<!-- "+guideFile+"#")).FindAll(readme, -1)
	assert.Len(t, markers, len(included), "every include marker in README.md is followed by its ```ts block")
}
