package rollouts

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"
)

// callLine is a capture line (SPEC §3.1) for model call id with the given usage and latency.
func callLine(id, usage string, latencyMS string) string {
	return `{"model_call_id":"` + id + `","dialect":"responses","model_ref":{"type":"responses_api_models","name":"policy"},` +
		`"started_at":100.0,"completed_at":100.5,"latency_ms":` + latencyMS + `,"status_code":200,"error_category":null,` +
		`"request":{"input":"hi"},"response":{"id":"resp-` + id + `","model":"m","status":"completed","usage":` + usage +
		`,"output":[]}}` + "\n"
}

// newStore returns a store in a fresh temporary directory.
func newStore(t testing.TB) *capture.Store {
	t.Helper()
	s, err := capture.NewStore(t.TempDir())
	require.NoError(t, err)
	return s
}

// writeCapture writes content as id's capture file in s.
func writeCapture(t testing.TB, s *capture.Store, id, content string) {
	t.Helper()
	path, err := s.CapturePath(id)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

// attachString runs Attach over input and returns the output.
func attachString(t *testing.T, input string, stores []*capture.Store, opts Options) (string, Summary, error) {
	t.Helper()
	var out bytes.Buffer
	sum, err := Attach(context.Background(), strings.NewReader(input), &out, stores, opts)
	return out.String(), sum, err
}

// member returns the JSON text of key in the JSONL line (test failure when absent).
func member(t *testing.T, line, key string) string {
	t.Helper()
	l, err := rolloutline.Parse([]byte(line))
	require.NoError(t, err)
	v, ok := l.Get(key)
	require.True(t, ok, "%s missing in %s", key, line)
	return string(v)
}

// lines splits output into its lines (each without "\n").
func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// absTestdata returns the absolute path of testdata/<name>.
func absTestdata(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(t, err)
	return p
}
