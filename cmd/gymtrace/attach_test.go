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

// attachFixture returns a capture dir holding rollout 0-0 (one call) and a rollouts file of the
// given content.
func attachFixture(t *testing.T, rows string) (dir, input string) {
	t.Helper()
	dir = t.TempDir()
	s, err := capture.NewStore(dir)
	require.NoError(t, err)
	line := `{"model_call_id":"c1","dialect":"responses","model_ref":{"type":"responses_api_models","name":"p"},` +
		`"started_at":1.0,"completed_at":2.0,"latency_ms":1000.0,"status_code":200,"error_category":null,` +
		`"request":{"input":"secret"},"response":{"id":"r","model":"m","usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}}` + "\n"
	require.NoError(t, s.Append(t.Context(), "0-0", []byte(line)))
	input = filepath.Join(t.TempDir(), "rollouts.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(rows), 0o640))
	return dir, input
}

func TestAttachCommand(t *testing.T) {
	rows := "{\"reward\": 1.0, \"_ng_task_index\": 0, \"_ng_rollout_index\": 0}\n{\"note\":\"no id\"}\n{\"_ng_task_index\":3,\"_ng_rollout_index\":3}\n"
	dir, input := attachFixture(t, rows)
	outDir := t.TempDir()
	output := filepath.Join(outDir, "out.jsonl")

	r := runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output, "--no-trajectory")
	require.NoError(t, r.err)
	assert.Empty(t, r.stdout)
	got, err := os.ReadFile(output)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	require.Len(t, lines, 3)
	assert.True(t, strings.HasPrefix(lines[0], `{"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":0,"ng_model_call_capture":{"rollout_id":"0-0","metrics":{"tokens_in":3,"tokens_out":4,`))
	assert.NotContains(t, lines[0], "secret", "no payloads without --include-payloads")
	assert.Equal(t, `{"note":"no id"}`, lines[1])
	assert.Contains(t, lines[2], `"gaps":[{"code":"model_call_capture_no_records"}]`)
	assert.Contains(t, r.stderr, "line 3: rollout 3-3 without capture records")
	assert.Contains(t, r.stderr, "wrote "+output+": 3 rows, 2 attached, 1 unchanged, 0 malformed")

	fi, err := os.Stat(output)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "a new output is private, whatever the input's mode")
	entries, err := os.ReadDir(outDir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")

	r = runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output, "--no-trajectory", "--include-payloads")
	require.NoError(t, r.err)
	got, err = os.ReadFile(output)
	require.NoError(t, err)
	assert.Contains(t, string(got), `"request":{"input":"secret"}`, "existing output replaced")
}

func TestAttachCommandMalformedRows(t *testing.T) {
	rows := "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n{\"_ng_rollout_id\":\"no/slash\"}\nnot json\n"
	dir, input := attachFixture(t, rows)
	output := filepath.Join(t.TempDir(), "out.jsonl")
	r := runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output)
	require.Error(t, r.err)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.err.Error(), "2 malformed rows copied unchanged to "+output)
	assert.Contains(t, r.stderr, "malformed row copied unchanged: line 2: _ng_rollout_id must be a string")
	assert.Contains(t, r.stderr, "'no/slash'")
	assert.Contains(t, r.stderr, "malformed row copied unchanged: line 3: not a JSON object")
	got, err := os.ReadFile(output)
	require.NoError(t, err, "the output is written before the error")
	lines := strings.Split(string(got), "\n")
	require.Len(t, lines, 4)
	assert.Contains(t, lines[0], `"rollout_id":"0-0"`)
	assert.Equal(t, []string{`{"_ng_rollout_id":"no/slash"}`, "not json", ""}, lines[1:])
}

func TestAttachCommandErrors(t *testing.T) {
	dir, input := attachFixture(t, "{}\n")
	outDir := t.TempDir()
	output := filepath.Join(outDir, "out.jsonl")
	link := filepath.Join(outDir, "link.jsonl")
	require.NoError(t, os.Symlink(input, link))
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{name: "no capture dir", args: []string{"--input", input, "--output", output}, code: 2, want: "--capture-dir is required"},
		{name: "relative capture dir", args: []string{"--capture-dir", "rel", "--input", input, "--output", output}, code: 2, want: `--capture-dir "rel" must be an absolute path`},
		{name: "no input", args: []string{"--capture-dir", dir, "--output", output}, code: 2, want: "--input is required"},
		{name: "no output", args: []string{"--capture-dir", dir, "--input", input}, code: 2, want: "--output is required"},
		{name: "output is input", args: []string{"--capture-dir", dir, "--input", input, "--output", input}, code: 2, want: "are the same file"},
		{name: "output is input spelled differently", args: []string{"--capture-dir", dir, "--input", input, "--output", filepath.Dir(input) + "/./rollouts.jsonl"}, code: 2, want: "are the same file"},
		{name: "output links to input", args: []string{"--capture-dir", dir, "--input", input, "--output", link}, code: 2, want: "are the same file"},
		{name: "positional argument", args: []string{"--capture-dir", dir, "--input", input, "--output", output, "extra"}, code: 2, want: `unexpected argument "extra"`},
		{name: "missing input", args: []string{"--capture-dir", dir, "--input", input + ".nope", "--output", output}, code: 1, want: "no such file"},
		{name: "input is a directory", args: []string{"--capture-dir", dir, "--input", outDir, "--output", output}, code: 2,
			want: fmt.Sprintf("--input %q is a directory: it must name a JSONL file", outDir)},
		{name: "inputs is a directory", args: []string{"--capture-dir", dir, "--input", input, "--inputs", outDir, "--output", output}, code: 2,
			want: fmt.Sprintf("--inputs %q is a directory", outDir)},
		{name: "missing capture dir", args: []string{"--capture-dir", dir + "/nope", "--input", input, "--output", output}, code: 1, want: "capture directory does not exist"},
		{name: "output dir missing", args: []string{"--capture-dir", dir, "--input", input, "--output", outDir + "/nope/out.jsonl"}, code: 1,
			want: "attach: create output " + outDir + "/nope/out.jsonl: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runGymtrace(t, append([]string{"attach"}, tt.args...)...)
			require.Error(t, r.err)
			assert.Equal(t, tt.code, r.code, r.err.Error())
			assert.Contains(t, r.err.Error(), tt.want)
			assert.NotContains(t, r.err.Error(), ".tmp-", "the temporary file is never named")
			_, err := os.Stat(output)
			assert.True(t, os.IsNotExist(err), "no output written")
			_, err = os.Stat(dir + "/nope")
			assert.True(t, os.IsNotExist(err), "capture dir not created")
		})
	}
	entries, err := os.ReadDir(outDir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only the link; no temporary files left")
	in, err := os.ReadFile(input)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(in), "input untouched")
}

// TestAttachRefusesOutputOverInputs: --output naming the --inputs file (the run's materialized
// inputs, which attach reads), spelled as given, differently or through a symbolic link, is refused
// like --output over --input (exit 2, "are the same file", README "An output never replaces what
// gymtrace reads"); the inputs file is left byte for byte and nothing is written.
func TestAttachRefusesOutputOverInputs(t *testing.T) {
	dir, input := attachFixture(t, `{"_ng_task_index":0,"_ng_rollout_index":0}`+"\n")
	inDir := t.TempDir()
	const rows = `{"_ng_task_index":0,"_ng_rollout_index":0,"task_id":"T1"}` + "\n"
	inputs := filepath.Join(inDir, "materialized_inputs.jsonl")
	require.NoError(t, os.WriteFile(inputs, []byte(rows), 0o600))
	link := filepath.Join(t.TempDir(), "link.jsonl")
	require.NoError(t, os.Symlink(inputs, link))
	for _, tt := range []struct{ name, output string }{
		{"same path", inputs},
		{"spelled differently", inDir + "/./materialized_inputs.jsonl"},
		{"through a symbolic link", link},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--inputs", inputs, "--output", tt.output)
			require.Error(t, r.err)
			assert.Equal(t, 2, r.code, r.err.Error())
			assert.ErrorContains(t, r.err, `--output "`+tt.output+`" and --inputs "`+inputs+`" are the same file; write the output elsewhere`)
			got, err := os.ReadFile(inputs)
			require.NoError(t, err)
			assert.Equal(t, rows, string(got), "the inputs file is left as it was")
			assert.Equal(t, []string{"materialized_inputs.jsonl"}, entryNames(t, inDir), "no temporary file")
		})
	}
}

// A new output is created 0600 (it may hold payloads) even from a world-readable input such as
// /dev/null; an existing output keeps its mode.
func TestAttachCommandOutputMode(t *testing.T) {
	dir, _ := attachFixture(t, "{}\n")
	tests := []struct {
		name     string
		input    string
		existing os.FileMode // 0: no output yet
		want     os.FileMode
	}{
		{name: "input /dev/null", input: os.DevNull, want: 0o600},
		{name: "world-writable input", input: func() string {
			p := filepath.Join(t.TempDir(), "in.jsonl")
			require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
			require.NoError(t, os.Chmod(p, 0o666))
			return p
		}(), want: 0o600},
		{name: "existing output keeps its mode", input: os.DevNull, existing: 0o640, want: 0o640},
		{name: "existing private output", input: os.DevNull, existing: 0o600, want: 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			output := filepath.Join(t.TempDir(), "out.jsonl")
			if tt.existing != 0 {
				require.NoError(t, os.WriteFile(output, []byte("old\n"), 0o600))
				require.NoError(t, os.Chmod(output, tt.existing))
			}
			r := runGymtrace(t, "attach", "--capture-dir", dir, "--input", tt.input, "--output", output)
			require.NoError(t, r.err)
			fi, err := os.Stat(output)
			require.NoError(t, err)
			assert.Equal(t, tt.want, fi.Mode().Perm())
		})
	}
}

// attach accepts exactly the rollout ids the proxy captures under (SPEC D12): a derived id such as
// "-1-1" or an explicit id over 200 bytes is reported with its row, value and rule, the row is copied
// unchanged and the command exits 1 after writing every row.
func TestAttachCommandRefusesIDsTheProxyRefuses(t *testing.T) {
	long := strings.Repeat("r", 300)
	rows := "{\"_ng_task_index\":-1,\"_ng_rollout_index\":1}\n{\"_ng_rollout_id\":\"" + long + "\"}\n{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n"
	dir, input := attachFixture(t, rows)
	output := filepath.Join(t.TempDir(), "out.jsonl")
	r := runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output)
	require.Error(t, r.err)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.err.Error(), "2 malformed rows copied unchanged to "+output)
	assert.Contains(t, r.stderr, `malformed row copied unchanged: line 1: rollout id of the row is not one the proxy accepts (SPEC D12): invalid rollout id "-1-1": must match ^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	assert.Contains(t, r.stderr, `line 2: rollout id of the row is not one the proxy accepts (SPEC D12): invalid rollout id "`+long+`": longer than 200 bytes (300)`)
	assert.NotContains(t, r.stderr, "unreadable capture")
	got, err := os.ReadFile(output)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, `{"_ng_task_index":-1,"_ng_rollout_index":1}`, lines[0], "left unchanged")
	assert.Equal(t, `{"_ng_rollout_id":"`+long+`"}`, lines[1], "left unchanged")
	assert.Contains(t, lines[2], `"ng_model_call_capture":{"rollout_id":"0-0"`)
}
