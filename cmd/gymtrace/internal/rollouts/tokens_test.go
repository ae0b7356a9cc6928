package rollouts

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
)

func TestMaskCause(t *testing.T) {
	for _, tt := range []struct {
		capture, unresolved, want string
	}{
		{`{"n_calls":0,"error":"capture contains no token records"}`, `[]`, "capture contains no token records"},
		{`{"n_calls":2,"chains":1,"roots":1,"capture_incomplete":true}`, `[]`, "capture incomplete (a call's tokens were not recorded: an intent without an entry, or an incomplete mark)"},
		{`{"n_calls":3,"chains":2,"roots":1}`, `[]`, "2 chains (want one of each: the calls do not chain into one prefix)"},
		{`{"n_calls":3,"chains":1,"roots":1}`, `["c1","c2"]`, "unresolved retries c1, c2"},
		{`{"n_calls":3,"chains":1,"roots":1}`, `[]`, "masked (no cause recorded)"},
	} {
		capture, err := ojson.Parse([]byte(tt.capture))
		require.NoError(t, err)
		unresolved, err := ojson.Parse([]byte(tt.unresolved))
		require.NoError(t, err)
		assert.Equal(t, tt.want, MaskCause(capture, unresolved.Elems()), tt.capture)
	}
}

// TestMaskFractionErrorText: the reference's message, with Python's float and dict text.
func TestMaskFractionErrorText(t *testing.T) {
	ts := TokenSummary{Finalized: 3}
	for _, c := range []string{`{"n_calls":1,"capture_incomplete":true}`, `{"n_calls":0,"error":"capture contains no token records"}`, `{"n_calls":1,"capture_incomplete":true}`} {
		v, err := ojson.Parse([]byte(c))
		require.NoError(t, err)
		ts.Masked = append(ts.Masked, maskedRollout(1, "r", v, nil))
	}
	limit := 0.25
	err := ts.checkFraction(&TokenOptions{MaxMaskFraction: &limit, MinSamples: 3})
	require.Error(t, err)
	assert.Equal(t, "3/3 finalized rollouts (100.0%) are masked, exceeding token_id_capture.max_mask_fraction=0.25. Mask reasons: {'capture_incomplete': 2, 'capture contains no token records': 1}. Aborting instead of collecting mostly token-less data.", err.Error())
	assert.NoError(t, ts.checkFraction(&TokenOptions{MaxMaskFraction: &limit, MinSamples: 4}), "below the minimum number of samples")
	assert.NoError(t, ts.checkFraction(&TokenOptions{}), "no limit")
}
