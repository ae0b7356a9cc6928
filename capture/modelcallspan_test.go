package capture

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gymtrace/gymtrace/semconv"
)

type kvLookup = Attributes

func TestModelCallRollout(t *testing.T) {
	tests := []struct {
		name   string
		attrs  kvLookup
		wantID string
		wantOK bool
	}{
		{name: "model call", attrs: kvLookup{semconv.GymtraceRolloutID("r1"), semconv.GymtraceModelCallID("abc")}, wantID: "r1", wantOK: true},
		{name: "mistyped call id still a model call", attrs: kvLookup{semconv.GymtraceRolloutID("r1"), semconv.GymtraceModelCallIDKey.Int(3)}, wantID: "r1", wantOK: true},
		{name: "no call id", attrs: kvLookup{semconv.GymtraceRolloutID("r1")}},
		{name: "no rollout id", attrs: kvLookup{semconv.GymtraceModelCallID("abc")}},
		{name: "rollout id not a string", attrs: kvLookup{semconv.GymtraceRolloutIDKey.Int(1), semconv.GymtraceModelCallID("abc")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := ModelCallRollout(tt.attrs)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantID, id)
		})
	}
}
