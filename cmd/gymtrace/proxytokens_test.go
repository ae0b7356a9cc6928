package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProxyCmdTokenUsageErrors(t *testing.T) {
	abs := t.TempDir()
	base := []string{"proxy", "--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--listen", "127.0.0.1:0"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown source", args: []string{"--token-source", "tgi"}, want: `--token-source: token source "tgi": want one of vllm, sglang, gym, none`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runGymtrace(t, append(append([]string(nil), base...), tt.args...)...)
			require.Error(t, res.err)
			assert.Contains(t, res.err.Error(), tt.want)
			assert.Equal(t, 2, res.code, "usage error exit code")
		})
	}
}
