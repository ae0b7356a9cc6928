package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

// clearFixture returns a capture dir where each id has a capture file and a marker, and a rollouts
// file with the given rows.
func clearFixture(t *testing.T, rows string, ids ...string) (*capture.Store, string) {
	t.Helper()
	s, err := capture.NewStore(t.TempDir())
	require.NoError(t, err)
	for _, id := range ids {
		require.NoError(t, s.Append(t.Context(), id, []byte(`{"model_call_id":"x"}`+"\n")))
		require.NoError(t, s.MarkIncomplete(id))
	}
	input := filepath.Join(t.TempDir(), "rows.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(rows), 0o600))
	return s, input
}

func TestClearCommand(t *testing.T) {
	s, input := clearFixture(t, "{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"_ng_attempt_index\":1}\n{\"x\":1}\n", "0-0-a1", "0-0")
	r := runGymtrace(t, "clear", "--capture-dir", s.Dir(), "--input", input)
	require.NoError(t, r.err)
	assert.Contains(t, r.stderr, "removed 2 files of 1 rollout in "+s.Dir()+"\n")
	has, err := s.HasCapture("0-0-a1")
	require.NoError(t, err)
	assert.False(t, has)
	has, err = s.HasCapture("0-0")
	require.NoError(t, err)
	assert.True(t, has, "other rollouts untouched")
}

func TestClearCommandBadRowRemovesNothing(t *testing.T) {
	s, input := clearFixture(t, "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n{\"_ng_rollout_id\":\"bad id\"}\n", "0-0")
	r := runGymtrace(t, "clear", "--capture-dir", s.Dir(), "--input", input)
	require.Error(t, r.err)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.err.Error(), "nothing removed")
	assert.Contains(t, r.err.Error(), "line 2:")
	assert.Contains(t, r.err.Error(), "'bad id'")
	has, err := s.HasCapture("0-0")
	require.NoError(t, err)
	assert.True(t, has)
}

func TestClearCommandMissingDir(t *testing.T) {
	_, input := clearFixture(t, "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n")
	dir := filepath.Join(t.TempDir(), "absent")
	r := runGymtrace(t, "clear", "--capture-dir", dir, "--input", input)
	require.NoError(t, r.err)
	assert.Contains(t, r.stderr, "does not exist: nothing to clear")
	_, err := os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "directory not created")
}

func TestClearCommandErrors(t *testing.T) {
	s, input := clearFixture(t, "{}\n")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{name: "no capture dir", args: []string{"--input", input}, code: 2, want: "--capture-dir is required"},
		{name: "relative capture dir", args: []string{"--capture-dir", "x/y", "--input", input}, code: 2, want: "must be an absolute path"},
		{name: "no input", args: []string{"--capture-dir", s.Dir()}, code: 2, want: "--input is required"},
		{name: "argument", args: []string{"--capture-dir", s.Dir(), "--input", input, "0-0"}, code: 2, want: "unexpected argument"},
		{name: "missing input", args: []string{"--capture-dir", s.Dir(), "--input", input + ".nope"}, code: 1, want: "no such file"},
		{name: "input is a directory", args: []string{"--capture-dir", s.Dir(), "--input", s.Dir()}, code: 2, want: fmt.Sprintf("--input %q is a directory", s.Dir())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runGymtrace(t, append([]string{"clear"}, tt.args...)...)
			require.Error(t, r.err)
			assert.Equal(t, tt.code, r.code, r.err.Error())
			assert.Contains(t, r.err.Error(), tt.want)
		})
	}
}

// The summary counts the files removed and says which ids had nothing to remove.
func TestClearCommandReportsWhatWasRemoved(t *testing.T) {
	s, input := clearFixture(t, "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n{\"_ng_task_index\":0,\"_ng_rollout_index\":1}\n", "0-0")
	require.NoError(t, s.Clear("0-0"))
	require.NoError(t, s.Append(t.Context(), "0-0", []byte(`{"model_call_id":"x"}`+"\n")))
	tests := []struct {
		name string
		want string
	}{
		{name: "one file of one rollout, one with nothing", want: "removed 1 file of 1 rollout in " + s.Dir() + "; 1 rollout had nothing to remove\n"},
		{name: "nothing left", want: "removed 0 files of 0 rollouts in " + s.Dir() + "; 2 rollouts had nothing to remove\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runGymtrace(t, "clear", "--capture-dir", s.Dir(), "--input", input)
			require.NoError(t, r.err)
			assert.Contains(t, r.stderr, tt.want)
			assert.NotContains(t, r.stderr, "cleared the captures of 2 rollouts")
		})
	}
}

// clear refuses the rollout ids the proxy refuses (SPEC D12), naming the row, the value and the rule,
// and removes nothing (not even the files of the good rows).
func TestClearCommandRefusesIDsTheProxyRefuses(t *testing.T) {
	long := strings.Repeat("r", 300)
	tests := []struct {
		name string
		bad  string
		want []string
	}{
		{name: "negative task index", bad: `{"_ng_task_index":-1,"_ng_rollout_index":1}`,
			want: []string{"line 2:", `invalid rollout id "-1-1": must match ^[A-Za-z0-9][A-Za-z0-9._-]*$`}},
		{name: "explicit id of 300 bytes", bad: `{"_ng_rollout_id":"` + long + `"}`,
			want: []string{"line 2:", long, "longer than 200 bytes (300)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, input := clearFixture(t, "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n"+tt.bad+"\n", "0-0")
			r := runGymtrace(t, "clear", "--capture-dir", s.Dir(), "--input", input)
			require.Error(t, r.err)
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.err.Error(), "nothing removed")
			for _, w := range tt.want {
				assert.Contains(t, r.err.Error(), w)
			}
			assert.NotContains(t, r.err.Error(), "file name too long")
			has, err := s.HasCapture("0-0")
			require.NoError(t, err)
			assert.True(t, has, "nothing deleted")
		})
	}
}

// A file that cannot be removed does not stop the clear: the later rows are cleared too, every failure
// is reported, the summary says what was removed, and the command exits 1.
func TestClearCommandTriesEveryRowAfterAFailure(t *testing.T) {
	rows := "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n{\"_ng_task_index\":0,\"_ng_rollout_index\":1}\n" +
		"{\"_ng_task_index\":0,\"_ng_rollout_index\":2}\n{\"_ng_task_index\":0,\"_ng_rollout_index\":3}\n"
	tests := []struct {
		name    string
		blocked []string
		seeded  []string
		summary string
	}{
		{name: "one failure", blocked: []string{"0-0"}, seeded: []string{"0-1", "0-2"},
			summary: "removed 4 files of 2 rollouts in %s; 1 rollout had nothing to remove; 1 rollout failed (every failure below)\n"},
		{name: "two failures", blocked: []string{"0-0", "0-2"}, seeded: []string{"0-1", "0-3"},
			summary: "removed 4 files of 2 rollouts in %s; 2 rollouts failed (every failure below)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, input := clearFixture(t, rows, tt.seeded...)
			for _, id := range tt.blocked {
				p, err := s.CapturePath(id)
				require.NoError(t, err)
				require.NoError(t, os.Mkdir(p, 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(p, "x"), nil, 0o600))
			}
			r := runGymtrace(t, "clear", "--capture-dir", s.Dir(), "--input", input)
			require.Error(t, r.err)
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stderr, fmt.Sprintf(tt.summary, s.Dir()))
			for _, id := range tt.blocked {
				assert.Contains(t, r.err.Error(), "remove "+filepath.Join(s.Dir(), id+capture.CaptureFileSuffix))
			}
			for _, id := range tt.seeded {
				has, err := s.HasCapture(id)
				require.NoError(t, err)
				assert.False(t, has, "%s cleared after the failure", id)
			}
		})
	}
}
