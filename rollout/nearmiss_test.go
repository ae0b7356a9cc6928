package rollout

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClassifyNearMiss(t *testing.T) {
	tests := []struct {
		path, escaped string // escaped "" means as path
		kind          string // "" means no near miss
		shape, fix    string // substrings of Shape and Fix
	}{
		{path: "/ng-rollout/r1/v1/responses"},
		{path: "/ng-rollout/r1/v1/chat/completions"},
		{path: "/ng-rollout/r1/training-token-capture/v1/messages"},
		{path: "/ng-rollout/r1/v1/models"},
		{path: "/ng-rollout/r1/v1/completions"},
		{path: "/v1/messages"},
		{path: "/v1/v1/messages"},
		{path: "/ng-rollout/..bad/v1/messages"}, // D12 refuses it with a 400 that says why
		{path: "/ng-rollout/r1/v1/v1/messages", kind: NearMissDoubledV1, shape: "/ng-rollout/<id>/v1/v1/messages",
			fix: "the Anthropic SDK adds /v1 itself: use .../ng-rollout/<id> as its base URL"},
		{path: "/ng-rollout/r1/v1/v1/chat/completions", kind: NearMissDoubledV1, fix: "use .../ng-rollout/<id>/v1 as its base URL"},
		{path: "/ng-rollout/r1/v1/v1/responses", kind: NearMissDoubledV1, fix: "OpenAI SDK"},
		{path: "/ng-rollout/r1/messages", kind: NearMissMissingV1, shape: "/ng-rollout/<id>/messages", fix: "must call .../ng-rollout/<id>/v1/messages"},
		{path: "/ng-rollout/r1/chat/completions", kind: NearMissMissingV1, fix: "the OpenAI SDK's base URL must end in /v1"},
		{path: "/ng-rollout/r1/training-token-capture/responses", kind: NearMissMissingV1, shape: "/ng-rollout/<id>/training-token-capture/responses"},
		{path: "/ng-rollout/r1/ng-rollout/r1/v1/messages", kind: NearMissDoubledPrefix, shape: "/ng-rollout/<id>/ng-rollout/<id>/v1/messages", fix: "once"},
		{path: "/ng-rollout/r1/v1/responses/", kind: NearMissSlashes, fix: "trailing slash"},
		{path: "/ng-rollout/r1//v1/chat/completions", kind: NearMissSlashes},
		{path: "/ng-rollout/r1/v1//messages", kind: NearMissSlashes},
		{path: "/ng-rollout/r1/api/v1/messages", kind: NearMissEndpointSuffix, fix: "right before /v1"},
		{path: "/ng-rollout/r1/openai/chat/completions", kind: NearMissEndpointSuffix},
		{path: "/ng-rollout//v1/chat/completions", kind: NearMissEmptyID, shape: "/ng-rollout//v1/chat/completions", fix: ".../ng-rollout/<id>/v1"},
		{path: "/ng-rollout/r1", kind: NearMissNoPath, shape: "/ng-rollout/<id>"},
		{path: "/ng-rollout/ab/v1/responses", escaped: "/ng-rollout/ab/v1%2Fresponses", kind: NearMissEncodedSeparator,
			shape: "/ng-rollout/<id>/v1/responses", fix: "plain slashes"},
		{path: "/ng-rollout/ab/v1/messages", escaped: "/ng-rollout/ab/v1%5cmessages"}, // decodes to another path: not this request's
		{path: "/ng-rollout/ab/v1/messages", escaped: "/ng-rollout/ab/v1/%6Dessages"}, // an encoded letter is no separator
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.escaped, func(t *testing.T) {
			escaped := tt.escaped
			if escaped == "" {
				escaped = tt.path
			}
			got, ok := ClassifyNearMiss(tt.path, escaped)
			if tt.kind == "" {
				assert.False(t, ok, "%+v", got)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, tt.kind, got.Kind)
			assert.Contains(t, got.Shape, tt.shape)
			assert.NotContains(t, got.Shape, "r1/v1", "the id is replaced in the shape")
			assert.Contains(t, got.Fix, tt.fix)
			assert.NotEmpty(t, got.Reason)
		})
	}
}

// One mistake made by many rollouts has one shape (the proxy logs each shape once).
func TestClassifyNearMissShapeIgnoresTheID(t *testing.T) {
	a, okA := ClassifyNearMiss("/ng-rollout/rollout-1/v1/v1/messages", "/ng-rollout/rollout-1/v1/v1/messages")
	b, okB := ClassifyNearMiss("/ng-rollout/rollout-2/v1/v1/messages", "/ng-rollout/rollout-2/v1/v1/messages")
	assert.True(t, okA && okB)
	assert.Equal(t, a, b)
}
