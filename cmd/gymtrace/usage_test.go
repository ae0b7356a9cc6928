package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every usage mistake exits 2, for every command: unknown commands and help topics, unknown flags,
// wrong argument counts (DESIGN.md "CLI contract").
func TestUsageErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown command", args: []string{"bogus"}, want: `unknown command "bogus" for "gymtrace"`},
		{name: "unknown command with a suggestion", args: []string{"calx"}, want: "did you mean calls?"},
		{name: "unknown root flag", args: []string{"--bogus"}, want: "unknown flag: --bogus"},
		{name: "unknown help topic", args: []string{"help", "bogus"}, want: `unknown help topic "bogus"`},
		{name: "calls without id", args: []string{"calls", "--capture-dir", dir}, want: "expected exactly one ROLLOUT_ID argument, got 0"},
		{name: "calls with two ids", args: []string{"calls", "--capture-dir", dir, "a", "b"}, want: "got 2"},
		{name: "calls unknown flag", args: []string{"calls", "--nope", "a"}, want: "unknown flag: --nope"},
		{name: "metrics without id", args: []string{"metrics", "--capture-dir", dir}, want: "expected exactly one ROLLOUT_ID"},
		{name: "metrics bad flag value", args: []string{"metrics", "--capture-dir"}, want: "flag needs an argument"},
		{name: "attach argument", args: []string{"attach", "x"}, want: `unexpected argument "x"`},
		{name: "clear argument", args: []string{"clear", "x"}, want: `unexpected argument "x"`},
		{name: "proxy argument", args: []string{"proxy", "x"}, want: `unexpected argument "x"`},
		{name: "demo argument", args: []string{"demo", "x"}, want: `unexpected argument "x"`},
		{name: "demo bad number", args: []string{"demo", "--rollouts", "many"}, want: "invalid argument"},
		{name: "version argument", args: []string{"version", "x"}, want: `unexpected argument "x"`},
		{name: "completion unknown shell", args: []string{"completion", "tcsh"}, want: `unknown command "tcsh" for "gymtrace completion"`},
		{name: "completion bash argument", args: []string{"completion", "bash", "x"}, want: `unknown command "x" for "gymtrace completion bash"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runGymtrace(t, tt.args...)
			require.Error(t, r.err)
			assert.Equal(t, 2, r.code, r.err.Error())
			assert.Contains(t, r.err.Error(), tt.want)
		})
	}
}

func TestHelpExits0(t *testing.T) {
	for _, args := range [][]string{{}, {"help"}, {"help", "calls"}, {"calls", "--help"}, {"completion"}} {
		r := runGymtrace(t, args...)
		require.NoError(t, r.err, "%v", args)
		assert.Contains(t, r.stdout, "Usage:", "%v", args)
	}
}
