package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/tokens"
)

// TestVerifyTokenCapturesAFinalizationRefuses: a cell's token capture whose finalization would not
// take it as it is — a torn final line its freeze cuts, an index its freeze refuses — fails the
// verification, as entries that do not read do.
func TestVerifyTokenCapturesAFinalizationRefuses(t *testing.T) {
	e := tokens.TokenEntry{SchemaVersion: tokens.SchemaVersion, RolloutID: "r1", ModelCallID: "c1",
		PromptTokenIDs: []int64{1}, GenerationTokenIDs: []int64{2}, GenerationLogProbs: []float64{-0.5}}
	line, err := e.Line()
	require.NoError(t, err)
	for _, tt := range []struct {
		name, jsonl, state, want string
	}{
		{"torn final line", string(line) + "{garb", "", "token entries of r1: a torn final line of 5 bytes"},
		{"index past the file", string(line), `{"entry_digests":{},"indexed_size":99999,"version":1}`, "token index of r1: Invalid token-capture index offset for rollout r1"},
		{"clean", string(line), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			record := `{"model_call_id":"c1","dialect":"chat","status_code":200,"error_category":null,"response":{"id":"x"}}` + "\n"
			require.NoError(t, os.WriteFile(filepath.Join(dir, "r1"+capture.CaptureFileSuffix), []byte(record), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "r1"+tokens.EntriesFileSuffix), []byte(tt.jsonl), 0o600))
			if tt.state != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "r1"+tokens.StateFileSuffix), []byte(tt.state+"\n"), 0o600))
			}
			v := verifyCaptures(dir, 1, true)
			assert.Equal(t, tt.want, v.Err)
		})
	}
}
