package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigConcurrencyLevelsOnce(t *testing.T) {
	c, err := Config{Concurrency: []int{32, 1, 32, 1}}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, []int{32, 1}, c.Concurrency, "a level named twice runs once, first order kept")
}

func TestConfigRelativeTempDir(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	c, err := Config{TempDir: "rel/dir"}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(wd, "rel/dir"), c.TempDir, "the proxies need an absolute capture directory")
}

func TestFileLimit(t *testing.T) {
	tests := []struct {
		name    string
		conc    int
		limit   uint64
		wantErr string
	}{
		{name: "plenty", conc: 256, limit: 1 << 20},
		{name: "exactly enough", conc: 256, limit: filesNeeded(256)},
		{name: "one short", conc: 256, limit: filesNeeded(256) - 1,
			wantErr: "bench: concurrency 256 needs about 832 open files, the limit here is 831 (ulimit -n): raise it or lower --concurrency"},
		{name: "small limit, small run", conc: 1, limit: 256},
		{name: "small limit, 256 callers", conc: 256, limit: 256, wantErr: "the limit here is 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkFileLimitOf(tt.conc, tt.limit)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
	// This process's own limit serves the default levels (Go raises it to the hard limit at start).
	assert.NoError(t, checkFileLimit(256))
}
