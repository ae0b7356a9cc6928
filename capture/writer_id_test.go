package capture

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/rollout"
)

// The writer holds the one id rule of every entry point (SPEC §0 D12): ids the proxy refuses are
// refused, and ids that are no file names keep the store's message, joined to the rule's.
func TestCheckRolloutID(t *testing.T) {
	for _, id := range []string{"3-1", "s7.0-0-a1", strings.Repeat("a", rollout.MaxIDBytes)} {
		require.NoError(t, CheckRolloutID(id), id)
	}
	for _, id := range []string{".hidden", "-x", "_x", "..", strings.Repeat("a", rollout.MaxIDBytes+1)} {
		err := CheckRolloutID(id)
		require.ErrorIs(t, err, rollout.ErrInvalidID, id)
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", id), id)
	}
	for _, id := range []string{"", "a/b", "../escape", "a b"} {
		err := CheckRolloutID(id)
		require.ErrorIs(t, err, ErrInvalidRolloutID, id)
		assert.Contains(t, err.Error(), "Invalid rollout id: ", id)
		require.ErrorIs(t, err, rollout.ErrInvalidID, "the message states the rule enforced too: %s", id)
		assert.Contains(t, err.Error(), "must match "+rollout.IDPattern, id)
	}
}
