package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

func TestWriteCallsTableGolden(t *testing.T) {
	fx := writeFixture(t)
	store, err := capture.NewStore(fx.dir)
	require.NoError(t, err)
	tests := []struct{ id, golden string }{
		{"0-1", "calls_0-1.golden"},
		{"1-0", "calls_1-0.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			recs, _, err := store.ReadAvailableModelCallRecords(tt.id)
			require.NoError(t, err)
			var b bytes.Buffer
			require.NoError(t, WriteCallsTable(&b, recs))
			assertFits(t, b.String())
			golden(t, tt.golden, b.Bytes())
		})
	}
}

func TestWriteCallsTableCleansControlCharacters(t *testing.T) {
	m := "evil\x1b]0;title\x07model"
	var b bytes.Buffer
	require.NoError(t, WriteCallsTable(&b, []capture.ModelCallRecord{{Model: &m}}))
	require.NotContains(t, b.String(), "\x1b")
	require.NotContains(t, b.String(), "\x07")
}
