package syncbuf

import (
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var _ io.Writer = (*Buffer)(nil)

func TestBufferZeroValue(t *testing.T) {
	var b Buffer
	assert.Equal(t, "", b.String())
	n, err := b.Write([]byte("ab"))
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	_, _ = io.WriteString(&b, "c")
	assert.Equal(t, "abc", b.String())
}

// Run under -race: concurrent writers and a reader, every write kept whole.
func TestBufferConcurrentSafe(t *testing.T) {
	var b Buffer
	const writers, writes = 8, 100
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range writes {
				_, _ = b.Write([]byte("x\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, strings.Repeat("x\n", writers*writes), b.String())
}
