package capturedir

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIsManaged(t *testing.T) {
	for name, want := range map[string]bool{
		"3-1.capture.jsonl": true, "3-1.capture.incomplete": true, "3-1.observations.jsonl": true,
		"3-1.tokens.jsonl": true, "3-1.tokens.state.json": true, "3-1.tokens.lock": true,
		"3-1.tokens.incomplete": true, "3-1.tokens.intents": true, ".tokens-state-abc": true,
		"rollouts.jsonl": false, "out.jsonl": false, "report.html": false, "capture.jsonl.bak": false,
	} {
		assert.Equal(t, want, IsManaged(name), name)
	}
}
