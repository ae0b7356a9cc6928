package proxy

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/capture"
)

// checkedAtEnd is a span processor that, as each span ends (after the durable processor, which
// is the provider's first), reads what the handler registered as checked for it.
type checkedAtEnd struct {
	h   **Handler
	mu  sync.Mutex
	got []capture.Span
}

func (c *checkedAtEnd) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *checkedAtEnd) Shutdown(context.Context) error                  { return nil }
func (c *checkedAtEnd) ForceFlush(context.Context) error                { return nil }
func (c *checkedAtEnd) OnEnd(s sdktrace.ReadOnlySpan) {
	v := capture.Span{SpanID: s.SpanContext().SpanID()}
	(*c.h).checked.SetChecked(&v)
	c.mu.Lock()
	c.got = append(c.got, v)
	c.mu.Unlock()
}

func TestCheckedBodiesRegisteredWhileTheSpanEnds(t *testing.T) {
	const compactResp = `{"id":"c1","object":"chat.completion","model":"m","choices":[]}`
	const sse = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	for _, c := range []struct {
		name, request, answer, contentType string
		wantRequest, wantResponse          string
	}{
		{name: "compact bodies", request: `{"model":"m","messages":[]}`, answer: compactResp, contentType: "application/json",
			wantRequest: `{"model":"m","messages":[]}`, wantResponse: compactResp},
		{name: "pretty request: its compacted object", request: "{\n  \"model\": \"m\",\n  \"messages\": []\n}", answer: compactResp, contentType: "application/json",
			wantRequest: `{"model":"m","messages":[]}`, wantResponse: compactResp},
		{name: "no JSON request: nothing for it", request: `model=m`, answer: compactResp, contentType: "application/json",
			wantResponse: compactResp},
		{name: "stream: its reassembled response is checked by the writer", request: `{"model":"m","stream":true,"messages":[]}`, answer: sse, contentType: "text/event-stream",
			wantRequest: `{"model":"m","stream":true,"messages":[]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h *Handler
			proc := &checkedAtEnd{h: &h}
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", c.contentType)
				_, _ = io.WriteString(w, c.answer)
			})
			env := newCaptureEnv(t, next, nil, WithSpanProcessor(proc))
			h = env.h
			resp, _, err := env.post(t, "/ng-rollout/r-checked/v1/chat/completions", c.request, nil)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)

			require.Len(t, proc.got, 1)
			assert.Equal(t, c.wantRequest, proc.got[0].CheckedRequest)
			assert.Equal(t, c.wantResponse, proc.got[0].CheckedResponse)
			after := capture.Span{SpanID: proc.got[0].SpanID}
			h.checked.SetChecked(&after)
			assert.Empty(t, after.CheckedRequest+after.CheckedResponse, "removed once the span ended")
			rec := env.record(t, "r-checked")
			assert.NotNil(t, rec["response"], "the record has its response")
		})
	}
}
