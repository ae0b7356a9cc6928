package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// FuzzBuild writes arbitrary bytes as a capture file and renders its report: reading never fails on
// content, every non-blank line is a call or a damaged line, and neither output lets a control
// character through.
func FuzzBuild(f *testing.F) {
	f.Add([]byte(`{"model_call_id":"a","dialect":"chat","model_ref":null,"started_at":1.0,"completed_at":2.0,"latency_ms":1000.0,"latency_ttft_ms":null,"status_code":200,"error_category":null,"request":null,"response":{"model":"m","usage":{"prompt_tokens":3,"completion_tokens":1}}}` + "\n"))
	f.Add([]byte("{not json}\n\n{\"error_category\":\"x\\u001b[31m\",\"latency_ms\":\"12\"}\n"))
	f.Add([]byte(`{"started_at":1e308,"completed_at":-1e308,"latency_ms":1e308,"latency_ttft_ms":-5,"response":{"usage":{"input_tokens":9223372036854775807,"output_tokens":9223372036854775807}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "r-1.capture.jsonl"), data, 0o600))
		rep, err := Build(t.Context(), dir, Options{PayloadBytes: 64})
		require.NoError(t, err)
		require.Len(t, rep.Rollouts, 1)
		r := rep.Rollouts[0]
		nonBlank := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				nonBlank++
			}
		}
		require.Equal(t, nonBlank, len(r.Calls)+r.DamagedLines, "every non-blank line is a call or damaged")

		var txt bytes.Buffer
		require.NoError(t, WriteText(&txt, rep))
		for _, c := range txt.String() {
			require.False(t, c != '\n' && unicode.IsControl(c), "control character %U in the text report", c)
		}
		var h bytes.Buffer
		require.NoError(t, WriteHTML(&h, rep, ""))
		_, err = html.Parse(bytes.NewReader(h.Bytes()))
		require.NoError(t, err)
		require.False(t, strings.Contains(h.String(), "<script>alert"))
	})
}
