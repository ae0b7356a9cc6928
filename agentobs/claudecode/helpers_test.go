package claudecode

import (
	"bufio"
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixtureConfigDir copies testdata/<name>/claude into a temporary directory (so a test can add the
// empty directories git does not keep) and returns the copy's path.
func fixtureConfigDir(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name, "claude")
	dst := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// writeTranscript writes lines (joined with "\n") to configDir/projects/<rel>.
func writeTranscript(t testing.TB, configDir, rel string, lines ...string) {
	t.Helper()
	p := filepath.Join(configDir, "projects", rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
}

// loadCalls derives the ModelCallRecords of a capture file (call_index = line position unless
// overridden), as the attachment step reads them.
func loadCalls(t *testing.T, path string, callIndex map[int]int) []capture.ModelCallRecord {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var calls []capture.ModelCallRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for i := 0; sc.Scan(); i++ {
		idx := i
		if v, ok := callIndex[i]; ok {
			idx = v
		}
		rec, err := capture.BuildModelCallRecord(sc.Bytes(), idx)
		require.NoError(t, err)
		calls = append(calls, rec)
	}
	require.NoError(t, sc.Err())
	return calls
}

// loadBundle decodes testdata/<name>/bundle.json strictly.
func loadBundle(t *testing.T, name string) agentobs.AgentObservationBundle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name, "bundle.json"))
	require.NoError(t, err)
	b, err := agentobs.DecodeBundle(data)
	require.NoError(t, err)
	return b
}

// checkGolden compares b's JSON dump with testdata/<name>/<file> byte for byte (-update rewrites
// it after a reviewed change).
func checkGolden(t *testing.T, name, file string, b agentobs.AgentObservationBundle) {
	t.Helper()
	got, err := b.MarshalJSON()
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", name, file)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test -run %s -update", t.Name())
	require.Equal(t, string(want), string(got))
}

// mustJSON returns b's JSON dump.
func mustJSON(t *testing.T, b agentobs.AgentObservationBundle) string {
	t.Helper()
	out, err := b.MarshalJSON()
	require.NoError(t, err)
	return string(out)
}

// invocations returns the bundle's invocations by id.
func invocations(b agentobs.AgentObservationBundle) map[string]*agentobs.AgentInvocation {
	out := make(map[string]*agentobs.AgentInvocation)
	for _, r := range b.Records {
		if v, ok := r.(*agentobs.AgentInvocation); ok {
			out[v.InvocationID] = v
		}
	}
	return out
}

func tools(b agentobs.AgentObservationBundle) map[string]*agentobs.ToolCallObservation {
	out := make(map[string]*agentobs.ToolCallObservation)
	for _, r := range b.Records {
		if v, ok := r.(*agentobs.ToolCallObservation); ok {
			out[v.ToolCallID] = v
		}
	}
	return out
}

func compactions(b agentobs.AgentObservationBundle) []*agentobs.ContextCompactionObservation {
	var out []*agentobs.ContextCompactionObservation
	for _, r := range b.Records {
		if v, ok := r.(*agentobs.ContextCompactionObservation); ok {
			out = append(out, v)
		}
	}
	return out
}

// gapCodes returns the gap codes in order.
func gapCodes(b agentobs.AgentObservationBundle) []string {
	out := make([]string, 0, len(b.Gaps))
	for _, g := range b.Gaps {
		out = append(out, g.Code)
	}
	return out
}

func responseIDs(refs []agentobs.ModelCallRef) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if r.ResponseID == nil {
			out = append(out, "<nil>")
			continue
		}
		out = append(out, *r.ResponseID)
	}
	return out
}

func modelCallIDs(refs []agentobs.ModelCallRef) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if r.ModelCallID == nil {
			out = append(out, "<nil>")
			continue
		}
		out = append(out, *r.ModelCallID)
	}
	return out
}

// itemTypes returns the "type" of each conversation item.
func itemTypes(t *testing.T, inv *agentobs.AgentInvocation) []string {
	t.Helper()
	out := make([]string, 0, len(inv.Conversation))
	for _, item := range inv.Conversation {
		out = append(out, itemField(t, item, "type"))
	}
	return out
}

// utcOptions returns opts reading naive timestamps in UTC (the fixtures' timestamps are all UTC).
func utcOptions(opts Options) Options {
	opts.Location = time.UTC
	return opts
}

// memFS serves a fstest.MapFS as the config directory root (fast fuzzing).
type memFS struct {
	root string
	m    fstest.MapFS
}

func (f memFS) isDir(path string) bool { return path == f.root }

func (f memFS) readDir(_, rel string) ([]fs.DirEntry, error) {
	if fi, err := fs.Stat(f.m, rel); err == nil && !fi.IsDir() {
		return nil, errNotDirectory
	}
	return fs.ReadDir(f.m, rel)
}

func (f memFS) readFile(_, rel string, limit int64) ([]byte, error) {
	data, err := fs.ReadFile(f.m, rel)
	if err == nil && int64(len(data)) > limit {
		return nil, tooLarge(rel, limit)
	}
	return data, err
}

// failingFS wraps the real file system and fails readDir for the directory failDir (relative to
// the config directory, slash-separated).
type failingFS struct {
	osFS
	failDir string
	panics  bool
}

func (f failingFS) readDir(configDir, rel string) ([]fs.DirEntry, error) {
	if f.panics {
		panic("injected")
	}
	if rel == f.failDir {
		return nil, fs.ErrPermission
	}
	return f.osFS.readDir(configDir, rel)
}
