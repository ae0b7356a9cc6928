package agentobs_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
)

// idServer answers every request with the model-call id the request's path names
// (/call/<id>), and a traceresponse header when the query has tr=<value>.
func idServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, ok := strings.CutPrefix(r.URL.Path, "/call/"); ok && id != "" {
			w.Header().Set(agentobs.ModelCallIDHeader, id)
		}
		if tr := r.URL.Query().Get("tr"); tr != "" {
			w.Header().Set("traceresponse", tr)
		}
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	require.True(t, strings.HasPrefix(srv.URL, "http://127.0.0.1:"), srv.URL)
	return srv
}

func get(t *testing.T, ctx context.Context, c *http.Client, url string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusTeapot, resp.StatusCode, "the response passes through unchanged")
}

func TestTransport(t *testing.T) {
	srv := idServer(t)
	h := newHarness(t)
	client := &http.Client{Transport: agentobs.Transport(nil)}
	defer client.CloseIdleConnections()
	rec, err := agentobs.NewRecorder(h.tp, "r-1")
	require.NoError(t, err)

	get(t, t.Context(), client, srv.URL+"/call/no-invocation") // passes through, records nothing
	ctx, inv := rec.StartInvocation(t.Context(), "agent")
	get(t, ctx, client, srv.URL+"/call/c1")
	get(t, ctx, client, srv.URL+"/no-header")
	tctx, tool := agentobs.StartToolCall(ctx, "t", "tc-1")
	get(t, tctx, client, srv.URL+"/call/c2") // a call inside a tool is the invocation's
	tool.End(nil)
	cctx, comp := agentobs.StartCompaction(ctx, "manual")
	target := trace.SpanContextConfig{TraceID: trace.TraceID{0xab, 15: 1}, SpanID: trace.SpanID{0xcd, 7: 2}, TraceFlags: trace.FlagsSampled}
	get(t, cctx, client, srv.URL+"/call/s1?tr="+fmt.Sprintf("00-%s-%s-01", target.TraceID, target.SpanID))
	get(t, cctx, client, srv.URL+"/call/s2?tr=00-zz-bad-01")
	comp.End(agentobs.CompactionResult{})
	get(t, ctx, client, srv.URL+"/call/c3")
	inv.End(nil)
	get(t, ctx, client, srv.URL+"/call/late") // after End: not recorded, request unaffected

	b := requireSameBundles(t, h, rec)
	r := split(b)
	assert.Equal(t, []string{"c1", "c2", "s1", "s2", "c3"}, refIDs(r.invocations[inv.ID()].ModelCalls), "summarizing calls are the invocation's too")
	require.Len(t, r.compactions, 1)
	c := r.compactions[0]
	assert.Equal(t, []string{"s1", "s2"}, refIDs(c.ModelCalls))
	assert.Equal(t, "c2", str(c.BeforeModelCall.ModelCallID))
	assert.Equal(t, "c3", str(c.AfterModelCall.ModelCallID))

	compSpan := h.byName()["context_compaction"]
	require.Len(t, compSpan.Links, 1, "a valid traceresponse becomes a link to the model-call span")
	assert.Equal(t, target.TraceID, compSpan.Links[0].SpanContext.TraceID())
	assert.Equal(t, target.SpanID, compSpan.Links[0].SpanContext.SpanID())
	assert.Equal(t, "s1", attrMap(compSpan.Links[0].Attributes)["gymtrace.model_call.id"].AsString())
	assert.Len(t, compSpan.Events, 2)
}

func TestTransportErrorPassesThrough(t *testing.T) {
	rec, err := agentobs.NewRecorder(nil, "r-1")
	require.NoError(t, err)
	ctx, inv := rec.StartInvocation(t.Context(), "a")
	defer inv.End(nil)
	failing := agentobs.Transport(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, io.ErrUnexpectedEOF }))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/", nil)
	require.NoError(t, err)
	resp, err := failing.RoundTrip(req) //nolint:bodyclose // nil response
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Empty(t, split(rec.Bundle()).invocations[inv.ID()].ModelCalls)

	assert.EqualError(t, agentobs.RecordModelCall(ctx, ""), "agentobs: record model call: the model_call_id is empty")
	assert.ErrorContains(t, agentobs.RecordModelCallRef(ctx, agentobs.ModelCallRef{ResponseID: agentobs.Ptr("resp-1")}), "model_call_id or both")
	require.NoError(t, agentobs.RecordModelCallRef(ctx, agentobs.ModelCallRef{
		ModelRef: &agentobs.ModelServerRef{Type: agentobs.ModelRefTypeResponsesAPIModels, Name: "policy"}, ResponseID: agentobs.Ptr("resp-1")}))
	got := split(rec.Bundle()).invocations[inv.ID()].ModelCalls
	require.Len(t, got, 1)
	assert.Equal(t, "resp-1", str(got[0].ResponseID))
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTransportWithCaptureHandler runs the agent's calls through proxy.CaptureHandler: the ids the
// recorder learns from the response header are the captured records' model_call_ids, so the join
// resolves every reference and leaves no ownership gap.
func TestTransportWithCaptureHandler(t *testing.T) {
	store, err := capture.NewStore(t.TempDir())
	require.NoError(t, err)
	model := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	})
	handler, err := proxy.CaptureHandler(model, proxy.WithStore(store), proxy.WithModelServerName("policy_model"))
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	defer func() {
		srv.Close()
		require.NoError(t, handler.Shutdown(context.Background()))
	}()

	h := newHarness(t)
	rec, err := agentobs.NewRecorder(h.tp, "r-9")
	require.NoError(t, err)
	client, err := proxy.NewHTTPClient(&http.Client{Transport: agentobs.Transport(nil)}, proxy.WithClientTracerProvider(h.tp))
	require.NoError(t, err)
	defer client.CloseIdleConnections()

	ctx, inv := rec.StartInvocation(t.Context(), "agent")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tctx, tool := agentobs.StartToolCall(ctx, "think", fmt.Sprintf("tc-%d", i))
			req, err := http.NewRequestWithContext(tctx, http.MethodPost, srv.URL+"/ng-rollout/r-9/v1/chat/completions",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			if !assert.NoError(t, err) {
				return
			}
			resp, err := client.Do(req)
			if !assert.NoError(t, err) {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			tool.End(nil)
		}()
	}
	wg.Wait()
	inv.End(nil)

	calls, err := store.ReadModelCallRecords("r-9")
	require.NoError(t, err)
	require.Len(t, calls, 4)
	b := requireSameBundles(t, h, rec)
	refs := split(b).invocations[inv.ID()].ModelCalls
	require.Len(t, refs, 4)
	captured := map[string]bool{}
	for _, c := range calls {
		captured[*c.ModelCallID] = true
	}
	for _, id := range refIDs(refs) {
		assert.True(t, captured[id], "recorded id %s is a captured model_call_id", id)
	}

	joined := agentobs.Join(b, calls)
	require.NoError(t, joined.Validate())
	assert.Empty(t, joined.Gaps, "every call is owned, every reference resolved")
	for _, ref := range split(joined).invocations[inv.ID()].ModelCalls {
		require.NotNil(t, ref.ModelRef, "canonical reference")
		assert.NotNil(t, ref.ResponseID)
	}

	// The agent's invoke_agent span is the parent of the HTTP client span, and the capture span
	// (in the handler's own provider) is in the rollout's trace under it.
	invSpan := h.byName()["invoke_agent agent"]
	assert.Equal(t, rollout.ID{Rollout: "r-9"}.TraceID(), invSpan.SpanContext.TraceID())
}
