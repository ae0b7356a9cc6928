package rollouts

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/rollout"
)

// TestAttachVectors runs every vectors/attachment.json case end to end: the vector's store is laid out
// on disk, its record becomes one rollout line, and Attach must add exactly the expected
// ng_model_call_capture (byte for byte, key order and number text included) or, for expected null,
// leave the line unchanged.
func TestAttachVectors(t *testing.T) {
	for _, c := range testvectors.Load(t, "attachment.json") {
		t.Run(c.Name, func(t *testing.T) {
			in := testvectors.Value(t, c.Input)
			record, _ := in.Get("record")
			storeSpec, _ := in.Get("store")
			include, _ := in.Get("include_payloads")
			includePayloads, _ := include.AsBool()

			var row bytes.Buffer
			require.NoError(t, json.Compact(&row, []byte(record.String())))
			s := newStore(t)
			if id, ok, err := rollout.IDFromRunBody(row.Bytes()); err == nil && ok {
				testvectors.WriteStore(t, s, id, storeSpec)
			}

			input := row.String() + "\n"
			out, sum, err := attachString(t, input, []*capture.Store{s}, Options{IncludePayloads: includePayloads})
			require.NoError(t, err)
			assert.Equal(t, 1, sum.Rows)

			if bytes.Equal(bytes.TrimSpace(c.Expected), []byte("null")) {
				assert.Equal(t, input, out, "a row without an id is written unchanged")
				assert.Equal(t, 1, sum.Unchanged)
				return
			}
			assert.Equal(t, 1, sum.Attached)
			assert.Equal(t, testvectors.Canonical(t, c.Expected), member(t, out, capture.AttachmentKey))
			// Every other key is kept as it was, and the attachment is the last key.
			assert.Equal(t, row.String()[:row.Len()-1]+`,"ng_model_call_capture":`, out[:row.Len()+len(`,"ng_model_call_capture":`)-1])
		})
	}
}
