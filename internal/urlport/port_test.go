package urlport

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValid(t *testing.T) {
	for port, want := range map[string]bool{
		"": true, "1": true, "80": true, "65535": true,
		"0": false, "65536": false, "99999": false, "-1": false, "+80": false, "8o": false,
		"99999999999999999999": false,
	} {
		assert.Equal(t, want, Valid(port), "%q", port)
	}
}
