package capture

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gymtrace/gymtrace/semconv"
)

type kvLookup = Attributes

func TestModelCallRollout(t *testing.T) {
	tests := []struct {
		name    string
		attrs   kvLookup
		wantID  string
		wantOK  bool
		wantErr string // of rolloutIDError
	}{
		{name: "model call", attrs: kvLookup{semconv.GymtraceRolloutID("r1"), semconv.GymtraceModelCallID("abc")}, wantID: "r1", wantOK: true},
		{name: "mistyped call id still a model call", attrs: kvLookup{semconv.GymtraceRolloutID("r1"), semconv.GymtraceModelCallIDKey.Int(3)}, wantID: "r1", wantOK: true},
		{name: "dialect without a call id still a model call", attrs: kvLookup{semconv.GymtraceRolloutID("r1"), semconv.GymtraceDialect("chat")}, wantID: "r1", wantOK: true},
		{name: "rollout id only: not a model call", attrs: kvLookup{semconv.GymtraceRolloutID("r1")}},
		{name: "no gymtrace attributes", attrs: kvLookup{semconv.GenAIOperationNameKey.String("execute_tool")}},
		{name: "no rollout id", attrs: kvLookup{semconv.GymtraceModelCallID("abc")}, wantOK: true,
			wantErr: "gymtrace.rollout.id is required on a model-call span"},
		{name: "rollout id not a string", attrs: kvLookup{semconv.GymtraceRolloutIDKey.Int(1), semconv.GymtraceModelCallID("abc")}, wantOK: true,
			wantErr: "gymtrace.rollout.id must be a string, got int64"},
		{name: "rollout id an array", attrs: kvLookup{semconv.GymtraceRolloutIDKey.StringSlice([]string{"r1"}), semconv.GymtraceDialect("chat")}, wantOK: true,
			wantErr: "gymtrace.rollout.id must be a string, got stringslice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := ModelCallRollout(tt.attrs)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantID, id)
			if !ok {
				return // the writer ignores the span
			}
			err := rolloutIDError(tt.attrs)
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}
