package sdk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The always-on Go conveniences refuse the ids the proxy answers with 400 (SPEC D12); the
// Correlation methods keep Gym's exact behaviour (vectors/url_helpers.json).
func TestTopLevelHelpersRefuseD12(t *testing.T) {
	long := strings.Repeat("r", 300)
	tests := []struct {
		name string
		body map[string]any
		id   string // the id SPEC §1.2 derives, which Correlation still uses
		want []string
	}{
		{name: "negative task index", body: map[string]any{TaskIndexKey: json.Number("-1"), RolloutIndexKey: json.Number("1")},
			id: "-1-1", want: []string{`"-1-1"`, RolloutIDPattern}},
		{name: "float task index", body: map[string]any{TaskIndexKey: json.Number("0.5"), RolloutIndexKey: json.Number("1")},
			id: "0.5-1"},
		{name: "string index with a slash", body: map[string]any{TaskIndexKey: "a/b", RolloutIndexKey: json.Number("0")},
			id: "a/b-0", want: []string{`"a/b-0"`, RolloutIDPattern}},
		{name: "explicit id of 300 bytes", body: map[string]any{RolloutIDKey: long},
			id: long, want: []string{long, "longer than 200 bytes (300)"}},
		{name: "attempt suffix over 200 bytes", body: map[string]any{RolloutIDKey: long[:199], AttemptIndexKey: json.Number("3")},
			id: long[:199] + "-a3", want: []string{"longer than 200 bytes (202)"}},
		{name: "exactly 200 bytes", body: map[string]any{RolloutIDKey: long[:200]}, id: long[:200]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gym, err := Correlation{ModelCallCapture: true}.BaseURLForRun("http://h:1", tt.body)
			require.NoError(t, err, "the Correlation method stays Gym-exact")
			assert.Equal(t, "http://h:1/ng-rollout/"+tt.id, gym)
			gymPath, err := Correlation{ModelCallCapture: true}.URLPathForRun("/v1/responses", tt.body)
			require.NoError(t, err)

			base, err := BaseURLForRun("http://h:1", tt.body)
			path, perr := URLPathForRun("/v1/responses", tt.body)
			if len(tt.want) == 0 {
				require.NoError(t, err)
				require.NoError(t, perr)
				assert.Equal(t, gym, base)
				assert.Equal(t, gymPath, path)
				return
			}
			for _, e := range []error{err, perr} {
				require.Error(t, e)
				require.ErrorIs(t, e, ErrInvalidRolloutID)
				for _, w := range tt.want {
					assert.Contains(t, e.Error(), w)
				}
			}
			assert.Contains(t, err.Error(), "base url for run: ")
			assert.Contains(t, perr.Error(), "url path for run: ")
			assert.Empty(t, base)
			assert.Empty(t, path)
		})
	}
}
