package demo

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// newTestClient is an HTTP client whose idle connections are closed when the test ends.
func newTestClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// callOnce makes the next call of cv against the model server at base (a "/v1" base URL): the
// summarizing call when summary is set.
func callOnce(t *testing.T, client *http.Client, base string, cv conversation, d string, stream, summary bool) Call {
	t.Helper()
	c := Call{Dialect: d, Stream: stream}
	read := cv.readJSON
	if stream {
		read = cv.readStream
	}
	require.NoError(t, post(t.Context(), client, base+cv.path(), cv.request(stream, summary), &c,
		func(r io.Reader) error { return read(r, &c) }))
	return c
}

// TestConversationStreamMatchesJSON checks the agent's stream reading against its JSON reading:
// the fake model answers a streamed request with exactly the JSON answer's content, so every call
// of an episode — the tool call, the compaction's summary, the final answer — must read the same,
// and leave the same history behind.
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
			both := func(summary bool) Call {
				t.Helper()
				a := callOnce(t, client, srv.URL+"/v1", jsonConv, d, false, summary)
				b := callOnce(t, client, srv.URL+"/v1", streamConv, d, true, summary)
				for _, c := range []*Call{&a, &b} {
					c.Stream, c.LatencyMS = false, 0
				}
				assert.Equal(t, a, b)
				assert.NotEmpty(t, a.ResponseID)
				assert.NotEmpty(t, a.Reasoning, "reasoning was asked for")
				assert.Positive(t, a.Usage.InputTokens)
				return a
			}
			sameHistory := func(step string) {
				t.Helper()
				ja, err := json.Marshal(jsonConv.request(false, false))
				require.NoError(t, err)
				jb, err := json.Marshal(streamConv.request(false, false))
				require.NoError(t, err)
				assert.JSONEq(t, string(ja), string(jb), "same history after %s", step)
			}

			first := both(false)
			require.Len(t, first.ToolCalls, 1, "a tool call first")
			for _, tc := range first.ToolCalls {
				jsonConv.addToolResult(tc, runTool(t.Context(), tc))
				streamConv.addToolResult(tc, runTool(t.Context(), tc))
			}
			sameHistory("the tool result")

			summary := both(true)
			assert.Empty(t, summary.ToolCalls, "the summarizing call makes no tool call")
			assert.Contains(t, summary.Text, tk.answer(), "the summary keeps the tool's result")
			jsonConv.compact(summary.Text)
			streamConv.compact(summary.Text)
			sameHistory("the compaction")

			final := both(false)
			assert.Empty(t, final.ToolCalls, "no tool call after the compaction")
			assert.Equal(t, 1.0, tk.reward(final.Text), "the final answer %q holds the result", final.Text)
		})
	}
}

// TestConversationRequests checks the request bodies of each dialect around a compaction: the
// summarizing call carries the summarizer's instructions and forbids tool calls, the compacted
// history is one user message with the summary, and later calls forbid tool calls too.
func TestConversationRequests(t *testing.T) {
	for _, tc := range []struct {
		dialect, system, toolChoice string
	}{
		{dialectResponses, "instructions", `"none"`},
		{dialectChat, "messages.0.content", `"none"`},
		{dialectMessages, "system", `{"type":"none"}`},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			conv, err := newConversation(tc.dialect, newTask(0))
			require.NoError(t, err)
			body := func(v any) map[string]any {
				t.Helper()
				b, err := json.Marshal(v)
				require.NoError(t, err)
				return decodeLine(t, b)
			}
			at := func(m map[string]any, path string) any {
				var v any = m
				for _, k := range strings.Split(path, ".") {
					switch x := v.(type) {
					case map[string]any:
						v = x[k]
					case []any:
						v = x[int(k[0]-'0')]
					}
				}
				return v
			}
			choice := func(m map[string]any) string {
				b, err := json.Marshal(m["tool_choice"])
				require.NoError(t, err)
				return string(b)
			}
			req := body(conv.request(false, false))
			assert.Equal(t, systemPrompt, at(req, tc.system))
			assert.NotContains(t, req, "tool_choice", "the first calls may call the tool")
			assert.NotEmpty(t, req["tools"])

			sum := body(conv.request(true, true))
			assert.Equal(t, summarizerPrompt, at(sum, tc.system))
			assert.JSONEq(t, tc.toolChoice, choice(sum))
			assert.NotEmpty(t, sum["tools"], "the tool stays defined for the history's tool calls")
			assert.Equal(t, true, sum["stream"])

			conv.compact("The calculator tool returned: 36")
			after := body(conv.request(false, false))
			assert.Equal(t, systemPrompt, at(after, tc.system))
			assert.JSONEq(t, tc.toolChoice, choice(after))
			history := after["messages"]
			if tc.dialect == dialectResponses {
				history = after["input"]
			}
			if tc.dialect == dialectChat {
				history = history.([]any)[1:] // after the system message
			}
			require.Len(t, history, 1, "the compacted history is one message")
			assert.Equal(t, "user", at(history.([]any)[0].(map[string]any), "role"))
			assert.Equal(t, compactedPrefix+"The calculator tool returned: 36", at(history.([]any)[0].(map[string]any), "content"))
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
			ep, err := runEpisode(t.Context(), newTestClient(t), nil, st.proxyURL, p)
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

// TestEpisodeCompactionFails runs an episode whose summarizing call fails (the model server
// answers it 503): the episode fails naming the compaction, and the observations file records a
// failed compaction with the failed call, inside a failed invocation that still owns the calls it
// made, so the join resolves them all.
func TestEpisodeCompactionFails(t *testing.T) {
	store, err := capture.NewStore(t.TempDir())
	require.NoError(t, err)
	model := fakemodel.New(fakemodel.WithFault(func(c fakemodel.Call) fakemodel.Fault {
		if bytes.Contains(c.Body, []byte(summarizerPrompt)) {
			return fakemodel.Fault{Status: http.StatusServiceUnavailable}
		}
		return fakemodel.Fault{}
	}))
	st, err := startStack(store, slog.New(slog.DiscardHandler), model)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, st.stop(t.Context())) })
	tel, err := newTelemetry(store)
	require.NoError(t, err)
	client := newTestClient(t)
	client.Transport = agentobs.Transport(client.Transport)

	p := planRollouts(2)[1] // chat, first call not streamed
	ep, err := runEpisode(t.Context(), client, tel.tp, st.proxyURL, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "compaction: call 2 (chat, stream true)")
	assert.Contains(t, err.Error(), "status 503")
	stats, err := tel.shutdown(t.Context())
	require.NoError(t, err)
	assert.Equal(t, ObservationCounts{Written: 4}, stats, "invocation, tool call, sandbox and compaction spans written")
	require.Len(t, ep.calls, 2)
	assert.True(t, ep.calls[1].Compaction)

	calls, err := store.ReadModelCallRecords(ep.id)
	require.NoError(t, err)
	require.Len(t, calls, 2, "both calls captured, the failed one too")
	fromFile, exists, err := agentobs.ReadBundle(store, ep.id)
	require.NoError(t, err)
	require.True(t, exists)
	joined := agentobs.Join(fromFile, calls)
	assert.Empty(t, joined.Gaps, "the failed summarizing call is owned too")
	var sawComp, sawInv bool
	for _, rec := range joined.Records {
		switch v := rec.(type) {
		case *agentobs.AgentInvocation:
			sawInv = true
			assert.Equal(t, agentobs.InvocationStatusFailed, v.Status)
			require.Len(t, v.ModelCalls, 2)
			assert.Equal(t, calls[1].ModelCallID, v.ModelCalls[1].ModelCallID)
		case *agentobs.ContextCompactionObservation:
			sawComp = true
			assert.Equal(t, agentobs.CompactionOutcomeFailed, v.Outcome)
			assert.Nil(t, v.TokensBefore, "a failed compaction reports no sizes")
			require.Len(t, v.ModelCalls, 1)
			assert.Equal(t, calls[1].ModelCallID, v.ModelCalls[0].ModelCallID, "the failed summarizing call")
		}
	}
	assert.True(t, sawInv)
	assert.True(t, sawComp)
}
