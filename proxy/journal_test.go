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

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/capture/capturetest"
)

// A journaled proxy recovers the journal a crashed proxy left (SPEC §0 D17), captures through its
// own journal, and removes it on Shutdown after fsyncing the files.
func TestProxyJournalDurability(t *testing.T) {
	dir := t.TempDir()
	old := `{"model_call_id":"0123456789abcdef0123456789abcdef","v":1}` + "\n"
	dead := capturetest.WriteDeadJournal(t, dir, "old"+capture.CaptureFileSuffix, old)

	up := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	})
	h, err := New(up.URL, WithCaptureDir(dir), WithDurability(capture.DurabilityJournal), WithModelServerName("policy_model"))
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	assert.Equal(t, old, readString(t, filepath.Join(dir, "old"+capture.CaptureFileSuffix)), "the crashed proxy's record is recovered")
	_, err = os.Stat(dead)
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Equal(t, capture.DurabilityJournal, h.Store().Durability())

	for range 3 {
		resp, err := http.Post(srv.URL+"/ng-rollout/j1/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	recs, invalid, err := h.Store().ReadAvailableModelCallRecords("j1")
	require.NoError(t, err)
	assert.Zero(t, invalid)
	assert.Len(t, recs, 3, "each answered call's record is in its file")
	des, err := os.ReadDir(filepath.Join(dir, capture.JournalDirName))
	require.NoError(t, err)
	assert.Len(t, des, 2, "the live journal and the setup lock")

	require.NoError(t, h.Shutdown(context.Background()))
	st := h.Store().SyncStats()
	assert.EqualValues(t, 3, st.Lines)
	assert.EqualValues(t, 1, st.FileSyncs, "the rollout file is fsynced once, at Shutdown")
	des, err = os.ReadDir(filepath.Join(dir, capture.JournalDirName))
	require.NoError(t, err)
	require.Len(t, des, 1)
	assert.Equal(t, "setup.lock", des[0].Name(), "Shutdown removes the journal")
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
