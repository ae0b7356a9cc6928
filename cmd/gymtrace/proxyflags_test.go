package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Mode flags must name permission bits the store can work with; --upstream, --otlp-endpoint and
// --capture-via-otlp must name a port from 1 to 65535; a credential in --upstream is never printed.
// All are usage errors, and nothing is created.
func TestProxyCmdModeAndUpstreamErrors(t *testing.T) {
	const up = "http://127.0.0.1:9"
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "dir mode 0", args: []string{"--upstream", up, "--dir-mode", "0"},
			want: []string{`--dir-mode "0"`, "directory mode 0000", "must include owner rwx (0700)"}},
		{name: "dir mode without owner x", args: []string{"--upstream", up, "--dir-mode", "0600"},
			want: []string{`--dir-mode "0600"`, "must include owner rwx (0700)"}},
		{name: "dir mode with setgid", args: []string{"--upstream", up, "--dir-mode", "2770"},
			want: []string{`--dir-mode "2770"`, "between 0000 and 0777 (no setuid, setgid or sticky bit)"}},
		{name: "file mode 0400", args: []string{"--upstream", up, "--file-mode", "0400"},
			want: []string{`--file-mode "0400"`, "file mode 0400", "must include owner rw (0600)"}},
		{name: "file mode setuid", args: []string{"--upstream", up, "--file-mode", "4600"},
			want: []string{`--file-mode "4600"`, "no setuid"}},
		{name: "upstream with user and password", args: []string{"--upstream", "http://user:sk-PASS@127.0.0.1:18001"},
			want: []string{`--upstream "http://user:xxxxx@127.0.0.1:18001" must not carry a query, fragment or user info`}},
		{name: "upstream with a token as user", args: []string{"--upstream", "http://sk-PASS@127.0.0.1:18001"},
			want: []string{`--upstream "http://xxxxx@127.0.0.1:18001"`}},
		{name: "upstream with credentials and /v1", args: []string{"--upstream", "http://user:sk-PASS@127.0.0.1:18001/v1"},
			want: []string{`--upstream "http://user:xxxxx@127.0.0.1:18001/v1" must be the base URL without /v1`}},
		{name: "unparsable upstream with credentials", args: []string{"--upstream", "http://user:sk-PASS%zz@127.0.0.1:18001"},
			want: []string{`--upstream "http://xxxxx@127.0.0.1:18001" must be an absolute http:// or https:// URL`}},
		{name: "upstream with credentials and a bad scheme", args: []string{"--upstream", "ftp://user:sk-PASS@127.0.0.1:18001"},
			want: []string{`--upstream "ftp://user:xxxxx@127.0.0.1:18001" must be an absolute`}},
		{name: "upstream port out of range", args: []string{"--upstream", "http://127.0.0.1:99999"},
			want: []string{`--upstream "http://127.0.0.1:99999": port 99999 must be a number from 1 to 65535`}},
		{name: "upstream port 0 with credentials", args: []string{"--upstream", "http://user:sk-PASS@127.0.0.1:0"},
			want: []string{`--upstream "http://user:xxxxx@127.0.0.1:0": port 0 must be a number from 1 to 65535`}},
		{name: "upstream ending in /V1", args: []string{"--upstream", "http://127.0.0.1:18001/V1"},
			want: []string{`--upstream "http://127.0.0.1:18001/V1" must be the base URL without /v1`}},
		{name: "otlp endpoint port out of range", args: []string{"--upstream", up, "--otlp-endpoint", "http://127.0.0.1:99999"},
			want: []string{`--otlp-endpoint "http://127.0.0.1:99999": port 99999 must be a number from 1 to 65535`}},
		{name: "capture gateway port out of range", args: []string{"--upstream", up, "--capture-via-otlp", "http://127.0.0.1:4318,http://127.0.0.1:99999"},
			want: []string{`--capture-via-otlp: fleet: endpoint "http://127.0.0.1:99999": port "99999" must be a number from 1 to 65535`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "new", "caps")
			r := runGymtraceBounded(t, append([]string{"proxy", "--capture-dir", dir, "--listen", "127.0.0.1:0"}, tt.args...)...)
			require.Error(t, r.err)
			assert.Equal(t, 2, r.code, r.err.Error())
			for _, w := range tt.want {
				assert.Contains(t, r.err.Error(), w)
			}
			assert.NotContains(t, r.err.Error()+r.stderr+r.stdout, "sk-PASS")
			assert.NoDirExists(t, filepath.Dir(dir), "nothing created")
		})
	}
}

// runGymtraceBounded is runGymtrace with a context that ends after 10s, so a proxy that wrongly
// accepts its flags stops (and the test fails) instead of serving forever.
func runGymtraceBounded(t *testing.T, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return cliResult{stdout: out.String(), stderr: errb.String(), err: err, code: exitCode(err)}
}

// The proxy applies --file-mode and --dir-mode exactly, whatever its umask: 0777 stays 0777 and new
// parents of the capture directory get the directory mode.
func TestProxyCmdExactModes(t *testing.T) {
	old := syscall.Umask(0o077) // inherited by the proxy process
	restored := false
	restore := func() {
		if !restored {
			syscall.Umask(old)
			restored = true
		}
	}
	defer restore()
	bin := buildGymtrace(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"resp_1","model":"m","status":"completed","usage":{"input_tokens":4,"output_tokens":1}}`)
	}))
	defer up.Close()
	base := t.TempDir()
	dir := filepath.Join(base, "new", "caps")
	p := startProxy(t, bin, up.URL, dir, "--file-mode", "0777", "--dir-mode", "0755")
	restore()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(p.url+"/ng-rollout/m-1/v1/responses", "application/json", strings.NewReader(`{"model":"m","input":"hi"}`))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)

	for _, d := range []string{filepath.Join(base, "new"), dir} {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm(), d)
	}
	fi, err := os.Stat(filepath.Join(dir, "m-1.capture.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o777), fi.Mode().Perm())
}
