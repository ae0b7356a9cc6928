package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/capturegen"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/rollout"
)

func TestReportCommand(t *testing.T) {
	rows := "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n{\"_ng_task_index\":3,\"_ng_rollout_index\":3}\n"
	dir, input := attachFixture(t, rows)
	html := filepath.Join(t.TempDir(), "report.html")

	r := runGymtrace(t, "report", "--capture-dir", dir, "--rollouts", input, "--html", html, "--jaeger-url", "http://127.0.0.1:9999/")
	require.NoError(t, r.err)
	assert.True(t, strings.HasPrefix(r.stdout, "health: 1 finding\n"), r.stdout)
	assert.Contains(t, strings.Join(strings.Fields(r.stdout), " "), "rollout 3-3 has no captured calls although capture was on: no capture file (named on line 2 of "+input+")")
	assert.Regexp(t, `(?m)^0-0 +1 +3 +4 +- +- +1\.0s +- *$`, r.stdout)
	assert.Regexp(t, `(?m)^3-3 +0 .* no calls$`, r.stdout)
	assert.Contains(t, r.stderr, "wrote "+html)

	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(page), `href="http://127.0.0.1:9999/trace/`+rollout.ID{Rollout: "0-0"}.TraceID().String()+`"`)
	assert.Contains(t, string(page), "secret", "the HTML report shows payloads")
	assert.Contains(t, string(page), `<div class="trace-view" data-rollout-id="0-0">`, "--html draws the trace views")
	fi, err := os.Stat(html)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "a new HTML report is private: it holds payloads")

	// With --run-id the captures live in DIR/RUN and the trace ids change.
	runDir := filepath.Join(dir, "run-2")
	require.NoError(t, os.Mkdir(runDir, 0o700))
	require.NoError(t, os.Rename(filepath.Join(dir, "0-0.capture.jsonl"), filepath.Join(runDir, "0-0.capture.jsonl")))
	r = runGymtrace(t, "report", "--capture-dir", dir, "--run-id", "run-2", "--html", html)
	require.NoError(t, r.err)
	page, err = os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(page), `href="http://127.0.0.1:16686/trace/`+rollout.ID{Run: "run-2", Rollout: "0-0"}.TraceID().String()+`"`)
}

func TestReportCommandErrors(t *testing.T) {
	dir, _ := attachFixture(t, "")
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"missing capture dir", []string{"report", "--capture-dir", filepath.Join(dir, "nope")}, 1, "does not exist"},
		{"relative capture dir", []string{"report", "--capture-dir", "rel"}, 2, "absolute"},
		{"bad jaeger url", []string{"report", "--capture-dir", dir, "--jaeger-url", "localhost:16686"}, 2, "--jaeger-url"},
		{"bad uncorrelated id", []string{"report", "--capture-dir", dir, "--uncorrelated-rollout-id", "a b"}, 2, "--uncorrelated-rollout-id"},
		{"missing rollouts file", []string{"report", "--capture-dir", dir, "--rollouts", filepath.Join(dir, "none.jsonl")}, 1, "none.jsonl"},
		{"positional argument", []string{"report", "--capture-dir", dir, "x"}, 2, "unexpected argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runGymtrace(t, tt.args...)
			require.Error(t, r.err)
			assert.Equal(t, tt.code, r.code)
			assert.Contains(t, r.err.Error(), tt.msg)
		})
	}
}

func TestRederiveCommand(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	_, err := capturegen.Generate(t.Context(), src, []capturegen.Call{
		{RolloutID: "r-1", Dialect: fakemodel.DialectChat, Stream: true},
		{RolloutID: "r-2", Dialect: fakemodel.DialectMessages, Stream: true},
	})
	require.NoError(t, err)
	// Break r-1's record the way an older version might have written it.
	p := filepath.Join(src, "r-1.capture.jsonl")
	good, err := os.ReadFile(p)
	require.NoError(t, err)
	l, err := rolloutlineSet(good, map[string]string{"response": "null", "error_category": `"capture_parse_error"`})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, l, 0o600))

	out := filepath.Join(t.TempDir(), "out")
	r := runGymtrace(t, "rederive", "--capture-dir", src, "--output", out)
	require.NoError(t, r.err)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "rollout r-1 line 1 (")
	assert.Contains(t, r.stderr, "response rebuilt from response_raw, error_category capture_parse_error -> null")
	assert.Contains(t, r.stderr, "wrote "+out+": 2 rollouts, 2 records: 1 changed, 1 rebuilt unchanged, 0 copied as they were")
	fixed, err := os.ReadFile(filepath.Join(out, "r-1.capture.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, string(good), string(fixed))
	broken, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(l), string(broken), "the original is untouched")

	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"output exists", []string{"rederive", "--capture-dir", src, "--output", out}, 1, "already exists"},
		{"same directory", []string{"rederive", "--capture-dir", src, "--output", src + "/"}, 2, "is the capture directory"},
		{"missing output", []string{"rederive", "--capture-dir", src}, 2, "--output is required"},
		{"relative output", []string{"rederive", "--capture-dir", src, "--output", "out"}, 2, "absolute"},
		{"unknown rollout", []string{"rederive", "--capture-dir", src, "--rollout", "r-9", "--output", filepath.Join(t.TempDir(), "o")}, 1, "no capture for the rollout r-9"},
		{"invalid rollout", []string{"rederive", "--capture-dir", src, "--rollout", "a/b", "--output", filepath.Join(t.TempDir(), "o")}, 2, `"a/b": must match ^[A-Za-z0-9][A-Za-z0-9._-]*$`},
		// The rule of every other command (SPEC §0 D12), not the looser file-name rule of SPEC §2.2.
		{"rollout with a leading underscore", []string{"rederive", "--capture-dir", src, "--rollout", "_x", "--output", filepath.Join(t.TempDir(), "o")}, 2, `"_x": must match`},
		{"rollout of dots", []string{"rederive", "--capture-dir", src, "--rollout", ".", "--output", filepath.Join(t.TempDir(), "o")}, 2, `".": must match`},
		{"rollout too long", []string{"rederive", "--capture-dir", src, "--rollout", strings.Repeat("a", 201), "--output", filepath.Join(t.TempDir(), "o")}, 2, "longer than 200 bytes"},
		{"missing capture dir", []string{"rederive", "--capture-dir", filepath.Join(src, "nope"), "--output", filepath.Join(t.TempDir(), "o")}, 1, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runGymtrace(t, tt.args...)
			require.Error(t, r.err)
			assert.Equal(t, tt.code, r.code)
			assert.Contains(t, r.err.Error(), tt.msg)
		})
	}

	one := filepath.Join(t.TempDir(), "one")
	r = runGymtrace(t, "rederive", "--capture-dir", src, "--rollout", "r-2", "--output", one)
	require.NoError(t, r.err)
	entries, err := os.ReadDir(one)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "r-2"+capture.CaptureFileSuffix, entries[0].Name())
}

// rolloutlineSet replaces top-level members of the one JSON line in b (keeping key order).
func rolloutlineSet(b []byte, set map[string]string) ([]byte, error) {
	line := bytes.TrimSuffix(b, []byte("\n"))
	for k, v := range set {
		i := bytes.Index(line, []byte(`"`+k+`":`))
		if i < 0 {
			continue
		}
		start := i + len(k) + 3
		end, err := valueEnd(line, start)
		if err != nil {
			return nil, err
		}
		line = append(append(append([]byte{}, line[:start]...), v...), line[end:]...)
	}
	return append(line, '\n'), nil
}

// valueEnd returns the end of the JSON value starting at line[start].
func valueEnd(line []byte, start int) (int, error) {
	dec := newJSONDecoder(line[start:])
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, err
	}
	return start + int(dec.InputOffset()), nil
}

func TestAttachStrict(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		dir, input := attachFixture(t, "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n")
		r := runGymtrace(t, "attach", "--strict", "--capture-dir", dir, "--input", input, "--output", filepath.Join(t.TempDir(), "o.jsonl"))
		require.NoError(t, r.err)
	})
	t.Run("finding", func(t *testing.T) {
		dir, input := attachFixture(t, "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n{\"_ng_task_index\":3,\"_ng_rollout_index\":3}\n")
		out := filepath.Join(t.TempDir(), "o.jsonl")
		r := runGymtrace(t, "attach", "--strict", "--capture-dir", dir, "--input", input, "--output", out)
		require.Error(t, r.err)
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.err.Error(), "attach --strict: 1 rollout with capture problems")
		assert.Contains(t, r.stderr, "rollout 3-3 without capture records")
		_, err := os.Stat(out)
		assert.NoError(t, err, "the output is still written")

		r = runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", out)
		require.NoError(t, r.err, "without --strict findings exit 0")
	})
	t.Run("a rollout named twice", func(t *testing.T) {
		dir, input := attachFixture(t, "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n")
		out := filepath.Join(t.TempDir(), "o.jsonl")
		r := runGymtrace(t, "attach", "--strict", "--capture-dir", dir, "--input", input, "--output", out)
		require.Error(t, r.err)
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.err.Error(), "attach --strict: 1 rollout with a rollout attached again")
		assert.Contains(t, r.stderr, `rollout attached twice: line 2: rollout "0-0" is attached again (first at line 1)`)
		assert.FileExists(t, out, "the output is still written")

		r = runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", out)
		require.NoError(t, r.err, "without --strict exit 0")
		assert.Contains(t, r.stderr, "rollout attached twice")
	})
}

// report --html into a directory that does not exist (or is a file) fails before printing
// anything: no text report on stdout, no file, exit 1 with the flag, the path and the cause (a
// fresh-user trial saw the whole text report printed, then the failure).
func TestReportHTMLMissingDirFailsFirst(t *testing.T) {
	dir := readFixtureDir(t)
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	for _, tt := range []struct{ html, want string }{
		{filepath.Join(t.TempDir(), "missing", "report.html"), "no such file or directory"},
		{filepath.Join(file, "report.html"), "not a directory"},
	} {
		r := runGymtrace(t, "report", "--capture-dir", dir, "--html", tt.html)
		require.Error(t, r.err)
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.err.Error(), `report: --html "`+tt.html+`": `)
		assert.Contains(t, r.err.Error(), tt.want)
		assert.Empty(t, r.stdout, "nothing printed before the failure")
		assert.NoFileExists(t, tt.html)
	}
}

// Findings name the command to look further with the report's own --capture-dir and --run-id,
// shell-quoted, never a placeholder.
func TestReportFindingsNameTheRealCommand(t *testing.T) {
	tests := []struct {
		name string
		run  string
		want string // "<dir>" stands for the capture directory
	}{
		{name: "no run id", want: "gymtrace calls --capture-dir '<dir>' r-1"},
		{name: "with a run id", run: "r1", want: "gymtrace calls --capture-dir '<dir>' --run-id r1 r-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "my captures")
			require.NoError(t, os.MkdirAll(filepath.Join(dir, tt.run, "r-1"+capture.CaptureFileSuffix), 0o700))
			args := []string{"report", "--capture-dir", dir}
			if tt.run != "" {
				args = append(args, "--run-id", tt.run)
			}
			r := runGymtrace(t, args...)
			require.NoError(t, r.err, r.stderr)
			squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
			assert.Contains(t, squash(r.stdout), squash("(see `"+strings.ReplaceAll(tt.want, "<dir>", dir)+"`)"))
			assert.NotContains(t, r.stdout, "DIR")
		})
	}
}
