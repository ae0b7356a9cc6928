package capturegen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	calls := []Call{
		{RolloutID: "r-1", Dialect: fakemodel.DialectResponses, Stream: true},
		{RolloutID: "r-1", Dialect: fakemodel.DialectChat, Tools: true},
		{RolloutID: "r-2", Dialect: fakemodel.DialectMessages, Stream: true, Fault: fakemodel.Fault{Cut: fakemodel.CutEnd, CutAfter: 2}},
		{RolloutID: "r-2", Dialect: fakemodel.DialectChat, Fault: fakemodel.Fault{Status: 429}},
	}
	statuses, err := Generate(t.Context(), dir, calls)
	require.NoError(t, err)
	assert.Equal(t, []int{200, 200, 200, 429}, statuses)
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	r1, err := store.ReadModelCallRecords("r-1")
	require.NoError(t, err)
	require.Len(t, r1, 2)
	assert.Nil(t, r1[0].ErrorCategory)
	assert.Equal(t, ModelServerName, r1[0].ModelRef.Name)
	require.Len(t, r1[1].ToolCalls, 1)
	r2, err := store.ReadModelCallRecords("r-2")
	require.NoError(t, err)
	require.Len(t, r2, 2)
	assert.Equal(t, "stream_truncated", *r2[0].ErrorCategory)
	assert.Equal(t, "rate_limit", *r2[1].ErrorCategory)
}

func TestGenerateRejectsBadCalls(t *testing.T) {
	tests := []struct {
		name string
		call Call
	}{
		{"invalid rollout id", Call{RolloutID: "bad id", Dialect: fakemodel.DialectChat}},
		{"unknown dialect", Call{RolloutID: "r", Dialect: "completions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(t.Context(), t.TempDir(), []Call{tt.call})
			require.Error(t, err)
		})
	}
}
