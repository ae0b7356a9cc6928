package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
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

// curlGuideRE matches the README's curl guide: the bash block (it uses bash substitutions) after its heading and note.
var curlGuideRE = regexp.MustCompile("(?s)\n### curl\n\nRun by `e2e/guide_test.go`[^\n]*\n\n```bash\n(.*?)```\n")

// TestCurlGuideInREADME runs the README's curl guide with bash against the real proxy (its address
// for the guide's 127.0.0.1:8000): the call leaves one record in the rollout 3-1, the grep prints
// the X-Gymtrace-Model-Call-Id that is its model_call_id, and the traceparent the guide derives
// with sha256sum puts it in the rollout's trace.
func TestCurlGuideInREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	m := curlGuideRE.FindSubmatch(readme)
	require.NotNil(t, m, "README.md has the curl guide under ### curl")
	require.Contains(t, string(m[1]), "http://127.0.0.1:8000/")
	if *directOnly {
		return
	}
	p := startProxy(t, startUpstream(t).URL)
	script := strings.ReplaceAll(string(m[1]), "http://127.0.0.1:8000/", p.URL+"/")

	cmd := exec.CommandContext(ctx(t), "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the curl guide:\n%s", out)
	header := regexp.MustCompile(`(?mi)^x-gymtrace-model-call-id: ([0-9a-f]{32})\r?$`).FindSubmatch(out)
	require.NotNil(t, header, "the guide prints the model-call id header:\n%s", out)

	const id = "3-1"
	records := readRecords(t, p.capturePath(id))
	require.Len(t, records, 1, "one record in the guide's rollout")
	assert.Equal(t, string(header[1]), records[0].Fields["model_call_id"], "the header names the call's record")
	assert.Equal(t, rolloutTraceID(id), records[0].Fields["trace_id"], "the call is in the rollout's trace")
	assert.Equal(t, json.Number("200"), records[0].Fields["status_code"])
}
