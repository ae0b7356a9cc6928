package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

func TestRunIDUsageErrors(t *testing.T) {
	abs := t.TempDir()
	input := filepath.Join(t.TempDir(), "rows.jsonl")
	require.NoError(t, os.WriteFile(input, []byte("{}\n"), 0o600))
	output := filepath.Join(t.TempDir(), "out.jsonl")
	proxy := []string{"proxy", "--upstream", "http://127.0.0.1:9", "--capture-dir", abs, "--listen", "127.0.0.1:0"}
	const rule = `must match ^[A-Za-z0-9][A-Za-z0-9._-]*$`
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "calls parent dir", args: []string{"calls", "--capture-dir", abs, "--run-id", "..", "x"}, want: `--run-id: invalid run id "..": ` + rule},
		{name: "metrics slash", args: []string{"metrics", "--capture-dir", abs, "--run-id", "a/b", "x"}, want: `--run-id: invalid run id "a/b": ` + rule},
		{name: "attach leading dash", args: []string{"attach", "--capture-dir", abs, "--run-id=-r", "--input", input, "--output", output}, want: `--run-id: invalid run id "-r": ` + rule},
		{name: "clear space", args: []string{"clear", "--capture-dir", abs, "--run-id", "a b", "--input", input}, want: `--run-id: invalid run id "a b": ` + rule},
		{name: "clear too long", args: []string{"clear", "--capture-dir", abs, "--run-id", strings.Repeat("r", 201), "--input", input}, want: `longer than 200 bytes (201)`},
		{name: "proxy run id", args: append(append([]string{}, proxy...), "--run-id", "../up"), want: `--run-id: invalid run id "../up": ` + rule},
		{name: "proxy uncorrelated id", args: append(append([]string{}, proxy...), "--uncorrelated-rollout-id", ".x"), want: `--uncorrelated-rollout-id: invalid rollout id ".x": ` + rule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runGymtrace(t, tt.args...)
			require.Error(t, r.err)
			assert.Contains(t, r.err.Error(), tt.want)
			assert.Equal(t, 2, r.code, "usage error exit code")
			assert.Empty(t, r.stdout)
		})
	}
	entries, err := os.ReadDir(abs)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing created")
	assert.NoFileExists(t, output)
}

// runFixture copies the read-command fixture rollout-7 into root/run.
func runFixture(t *testing.T, run string) (root string) {
	t.Helper()
	root = t.TempDir()
	src := readFixtureDir(t)
	require.NoError(t, os.Mkdir(filepath.Join(root, run), 0o700))
	for _, name := range []string{"rollout-7.capture.jsonl", "rollout-7.capture.incomplete"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(root, run, name), b, 0o600))
	}
	return root
}

func TestReadCommandsRunID(t *testing.T) {
	root := runFixture(t, "r1")
	fixture := readFixtureDir(t)
	for _, cmd := range [][]string{{"calls"}, {"calls", "--payloads"}, {"metrics"}} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			want := runGymtrace(t, append(append([]string{}, cmd...), "--capture-dir", fixture, "rollout-7")...)
			require.NoError(t, want.err)

			got := runGymtrace(t, append(append([]string{}, cmd...), "--capture-dir", root, "--run-id", "r1", "rollout-7")...)
			require.NoError(t, got.err)
			assert.Equal(t, want.stdout, got.stdout, "reads DIR/RUN/<id>.capture.jsonl")
			assert.Equal(t, strings.ReplaceAll(want.stderr, fixture, filepath.Join(root, "r1")), got.stderr, "the marker is read from DIR/RUN too")

			// Without --run-id the run's files are not seen (Gym's layout: DIR/<id>.capture.jsonl).
			none := runGymtrace(t, append(append([]string{}, cmd...), "--capture-dir", root, "rollout-7")...)
			require.NoError(t, none.err)
			assert.Contains(t, none.stderr, "no capture file for rollout rollout-7 ("+filepath.Join(root, "rollout-7.capture.jsonl")+" does not exist)")
			assert.NotContains(t, none.stdout, `"model_call_id":"`)

			// Another run of the same directory is empty.
			other := runGymtrace(t, append(append([]string{}, cmd...), "--capture-dir", root, "--run-id", "r2", "rollout-7")...)
			require.NoError(t, other.err)
			assert.Contains(t, other.stderr, "capture directory "+filepath.Join(root, "r2")+" does not exist")
			assert.NoDirExists(t, filepath.Join(root, "r2"), "never created")
		})
	}
}

func TestAttachAndClearRunID(t *testing.T) {
	root := t.TempDir()
	runStore, err := capture.NewStore(filepath.Join(root, "r1"))
	require.NoError(t, err)
	plainStore, err := capture.NewStore(root)
	require.NoError(t, err)
	line := func(id string) []byte {
		return []byte(`{"model_call_id":"` + id + `","dialect":"responses","model_ref":null,"started_at":1.0,"completed_at":2.0,"latency_ms":1000.0,` +
			`"status_code":200,"error_category":null,"request":{"input":"x"},"response":{"id":"r","model":"m","usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}}` + "\n")
	}
	require.NoError(t, runStore.Append(t.Context(), "0-0", line("in-run")))
	require.NoError(t, plainStore.Append(t.Context(), "0-0", line("no-run")))
	input := filepath.Join(t.TempDir(), "rollouts.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(`{"_ng_task_index":0,"_ng_rollout_index":0}`+"\n"), 0o600))

	output := filepath.Join(t.TempDir(), "out.jsonl")
	r := runGymtrace(t, "attach", "--capture-dir", root, "--run-id", "r1", "--input", input, "--output", output)
	require.NoError(t, r.err, r.stderr)
	got, err := os.ReadFile(output)
	require.NoError(t, err)
	assert.Contains(t, string(got), `"model_call_id":"in-run"`, "attached from DIR/RUN")
	assert.NotContains(t, string(got), `"no-run"`)

	r = runGymtrace(t, "attach", "--capture-dir", root, "--input", input, "--output", output)
	require.NoError(t, r.err, r.stderr)
	got, err = os.ReadFile(output)
	require.NoError(t, err)
	assert.Contains(t, string(got), `"model_call_id":"no-run"`, "without --run-id: DIR itself")

	r = runGymtrace(t, "clear", "--capture-dir", root, "--run-id", "r1", "--input", input)
	require.NoError(t, r.err, r.stderr)
	assert.Contains(t, r.stderr, "removed 1 file of 1 rollout in "+filepath.Join(root, "r1"))
	has, err := runStore.HasCapture("0-0")
	require.NoError(t, err)
	assert.False(t, has, "the run's capture cleared")
	has, err = plainStore.HasCapture("0-0")
	require.NoError(t, err)
	assert.True(t, has, "the run-less capture untouched")

	r = runGymtrace(t, "clear", "--capture-dir", root, "--run-id", "r9", "--input", input)
	require.NoError(t, r.err)
	assert.Contains(t, r.stderr, "capture directory "+filepath.Join(root, "r9")+" does not exist: nothing to clear")
}

// TestProxyCmdRunIDAndCorrelation runs the real binary with --run-id and --uncorrelated-rollout-id.
func TestProxyCmdRunIDAndCorrelation(t *testing.T) {
	bin := buildGymtrace(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"resp_1","model":"m","status":"completed","usage":{"input_tokens":4,"output_tokens":1}}`)
	}))
	defer up.Close()
	dir := t.TempDir()
	p := startProxy(t, bin, up.URL, dir, "--run-id", "r7", "--uncorrelated-rollout-id", "stray")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	tests := []struct {
		name, path  string
		header      map[string]string
		wantRollout string
		wantTrace   string // golden: sha256("gymtrace/rollout/r7/" + id)[:16] by Python's hashlib
	}{
		{name: "path prefix", path: "/ng-rollout/rid-1/v1/responses", wantRollout: "rid-1", wantTrace: "e24689df773d4d40f5c87044c15392c2"},
		{name: "header", path: "/v1/responses", header: map[string]string{"x-gymtrace-rollout-id": "hdr-1"}, wantRollout: "hdr-1", wantTrace: "0774311c71a9703ef0c1178d1661497b"},
		{name: "no id: uncorrelated rollout", path: "/v1/responses", wantRollout: "stray", wantTrace: "c9719f4a0ffd84c2cdcfff2d574414f3"},
		{name: "invalid header", path: "/v1/responses", header: map[string]string{"x-gymtrace-rollout-id": "a/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.url+tt.path, strings.NewReader(`{"model":"m","input":"hi"}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			if tt.wantRollout == "" {
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
				assert.Contains(t, string(body), `invalid rollout id \"a/b\"`)
				return
			}
			require.Equal(t, http.StatusOK, resp.StatusCode, "body %s", body)
			data, err := os.ReadFile(filepath.Join(dir, "r7", tt.wantRollout+".capture.jsonl"))
			require.NoError(t, err, "captured in DIR/RUN")
			var rec map[string]any
			require.NoError(t, json.Unmarshal(data, &rec))
			assert.Equal(t, tt.wantTrace, rec["trace_id"])
			assert.NoFileExists(t, filepath.Join(dir, tt.wantRollout+".capture.jsonl"), "nothing in DIR itself")
		})
	}
	// stderr arrives through a pipe copied by another goroutine: wait (bounded) for the line.
	assert.Eventually(t, func() bool {
		s := p.stderr.String()
		return strings.Contains(s, "names no rollout") && strings.Contains(s, "rollout_id=stray")
	}, 10*time.Second, 10*time.Millisecond, "stderr: %s", p.stderr)
}
