package python

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Expected values are CPython 3.11's str.strip(), str.lower() and str.isspace().
func TestStripLower(t *testing.T) {
	assert.Equal(t, "", Strip(" \t\x1c\x1f\u00a0\u2028\u3000\u0085"))
	assert.Equal(t, "\u200bx", Strip("\u200bx\x0b"), "U+200B is not whitespace in Python")
	assert.True(t, IsSpace('\x1c'), "information separators are whitespace in Python")
	assert.False(t, IsSpace('\u200b'))
	assert.Equal(t, "failed", Lower("FAILED"))
	assert.Equal(t, "fai\u0307led", Lower("FA\u0130LED"), "İ lowers to i + U+0307 in Python")
	assert.Equal(t, "k", Lower("\u212a"), "the Kelvin sign lowers to k in both")
}
