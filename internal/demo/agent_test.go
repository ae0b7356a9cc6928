package demo

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/fakemodel"
)

// newTestClient is an HTTP client whose idle connections are closed when the test ends.
func newTestClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// callOnce makes the next call of cv against the model server at base (a "/v1" base URL).
func callOnce(t *testing.T, client *http.Client, base string, cv conversation, d string, stream bool) Call {
	t.Helper()
	c := Call{Dialect: d, Stream: stream}
	read := cv.readJSON
	if stream {
		read = cv.readStream
	}
	require.NoError(t, post(t.Context(), client, base+cv.path(), cv.request(stream), &c,
		func(r io.Reader) error { return read(r, &c) }))
	return c
}

// TestConversationStreamMatchesJSON checks the agent's stream reading against its JSON reading:
// the fake model answers a streamed request with exactly the JSON answer's content, so both turns
// of an episode must read the same, and leave the same history behind.
func TestConversationStreamMatchesJSON(t *testing.T) {
	srv := httptest.NewServer(fakemodel.New())
	t.Cleanup(srv.Close)
	client := newTestClient(t)
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			tk := newTask(4)
			jsonConv, err := newConversation(d, tk)
			require.NoError(t, err)
			streamConv, err := newConversation(d, tk)
			require.NoError(t, err)
			for turn := range 2 {
				a := callOnce(t, client, srv.URL+"/v1", jsonConv, d, false)
				b := callOnce(t, client, srv.URL+"/v1", streamConv, d, true)
				for _, c := range []*Call{&a, &b} {
					c.Stream, c.LatencyMS = false, 0
				}
				assert.Equal(t, a, b, "turn %d", turn+1)
				assert.Equal(t, turn == 0, len(a.ToolCalls) == 1, "turn %d: a tool call first, then text", turn+1)
				assert.NotEmpty(t, a.ResponseID)
				assert.NotEmpty(t, a.Reasoning, "reasoning was asked for")
				assert.Positive(t, a.Usage.InputTokens)
				for _, tc := range a.ToolCalls {
					jsonConv.addToolResult(tc, runTool(tc))
					streamConv.addToolResult(tc, runTool(tc))
				}
				ja, err := json.Marshal(jsonConv.request(false))
				require.NoError(t, err)
				jb, err := json.Marshal(streamConv.request(false))
				require.NoError(t, err)
				assert.JSONEq(t, string(ja), string(jb), "same history after turn %d", turn+1)
			}
		})
	}
}

// TestEpisodeFailures runs one episode through the real proxy against a faulty model server: the
// agent reports the failure, and the proxy still captured the failed call with its error category.
func TestEpisodeFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		k        int // rollout position: dialect k%3, first call streamed when k is even
		fault    fakemodel.Fault
		wantErr  string
		category string
	}{
		{"responses error event", 0, fakemodel.Fault{Cut: fakemodel.CutErrorEvent, CutAfter: 3}, "stream error event error", "upstream_error"},
		{"chat overloaded", 1, fakemodel.Fault{Status: http.StatusServiceUnavailable}, "status 503", "upstream_error"},
		{"messages rate limited", 2, fakemodel.Fault{Status: http.StatusTooManyRequests}, "status 429", "rate_limit"},
		{"messages stream cut", 2, fakemodel.Fault{Cut: fakemodel.CutEnd, CutAfter: 2}, "stream ended without message_stop", "stream_truncated"},
		{"chat stream cut", 4, fakemodel.Fault{Cut: fakemodel.CutEnd, CutAfter: 2}, "stream ended without data: [DONE]", "stream_truncated"},
		{"chat connection broken", 1, fakemodel.Fault{Cut: fakemodel.CutAbort}, "read answer", "connection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, err := capture.NewStore(t.TempDir())
			require.NoError(t, err)
			model := fakemodel.New(fakemodel.WithFault(func(fakemodel.Call) fakemodel.Fault { return tc.fault }))
			st, err := startStack(store, slog.New(slog.DiscardHandler), model)
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, st.stop(t.Context())) })

			p := planRollouts(tc.k + 1)[tc.k]
			ep, err := runEpisode(t.Context(), newTestClient(t), st.proxyURL, p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Contains(t, err.Error(), "call 1 ("+p.dialect)
			require.Len(t, ep.calls, 1)

			recs, invalid, err := store.ReadAvailableModelCallRecords(ep.id)
			require.NoError(t, err)
			assert.Zero(t, invalid)
			require.Len(t, recs, 1, "the failed call is captured")
			require.NotNil(t, recs[0].ErrorCategory)
			assert.Equal(t, tc.category, *recs[0].ErrorCategory)
			assert.Equal(t, ep.calls[0].ModelCallID, *recs[0].ModelCallID)
		})
	}
}
