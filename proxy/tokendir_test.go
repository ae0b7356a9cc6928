package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/tokens"
)

// With WithRunID, an explicit token directory gets the run's subdirectory, as the capture
// directory does, so that two runs sharing it keep their token captures apart.
func TestTokenDirRunNamespace(t *testing.T) {
	root, tdir := t.TempDir(), t.TempDir()
	h, err := CaptureHandler(newEchoModel(), WithCaptureDir(root), WithRunID("run-9"), WithTokenDir(tdir), WithLogger(newTextLogger(io.Discard)))
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		srv.Close()
		require.NoError(t, h.Shutdown(context.Background()))
	})
	// A call under the token segment to a path that is not captured marks its rollout before it
	// is forwarded (docs/TOKENS.md §1.3): the mark shows where the token store is.
	resp, err := client.Post(srv.URL+"/ng-rollout/r1/training-token-capture/v1/models", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	assert.FileExists(t, filepath.Join(tdir, "run-9", "r1"+tokens.IncompleteFileSuffix))
	assert.NoFileExists(t, filepath.Join(tdir, "r1"+tokens.IncompleteFileSuffix))
}

// A token directory that exists and is not a directory, or that cannot be examined, fails
// construction naming it, before any call could fail on it.
func TestTokenDirRefusedAtConstruction(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notadir")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	for _, tt := range []struct {
		name, dir, want string
	}{
		{name: "a file", dir: file, want: `token dir "` + file + `": not a directory`},
		{name: "under a file", dir: filepath.Join(file, "sub"), want: `token dir "` + filepath.Join(file, "sub") + `": stat ` + filepath.Join(file, "sub") + `: not a directory`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CaptureHandler(newEchoModel(), WithCaptureDir(t.TempDir()), WithTokenSource(TokenSourceVLLM), WithTokenDir(tt.dir), WithLogger(newTextLogger(io.Discard)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
