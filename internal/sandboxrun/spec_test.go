package sandboxrun

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecValidate: every field that breaks its rule is named in one error (from a fresh-user
// trial: a negative Timeout hid a negative MemoryLimitBytes).
func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want []string // in order, one line each
	}{
		{name: "runnable", spec: Spec{Path: "true", Timeout: time.Second, MemoryLimitBytes: 1}},
		{name: "zero limits", spec: Spec{Path: "true"}},
		{name: "timeout and memory", spec: Spec{Path: "true", Timeout: -1, MemoryLimitBytes: -5}, want: []string{
			"invalid spec: Timeout -1ns is negative: it must be 0 (none) or positive",
			"invalid spec: MemoryLimitBytes -5 is negative: it must be 0 (none) or positive",
		}},
		{name: "every field", spec: Spec{Timeout: -time.Second, MemoryLimitBytes: -1}, want: []string{
			"invalid spec: Path is empty: a program to run is required",
			"invalid spec: Timeout -1s is negative",
			"invalid spec: MemoryLimitBytes -1 is negative",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, errInvalidSpec))
			lines := strings.Split(err.Error(), "\n")
			require.Len(t, lines, len(tt.want), err.Error())
			for i, w := range tt.want {
				assert.True(t, strings.HasPrefix(lines[i], w), "line %d: %q", i, lines[i])
			}
		})
	}
}
