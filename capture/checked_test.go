package capture_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// spacedRequest is a valid request object that is not compact: unchecked, a line compacts it;
// checked by its producer, the line takes it as it is. That difference shows whether the check ran.
const spacedRequest = `{"model": "m", "messages": []}`

func TestCheckedPayloadsSkipOnlyTheirOwnText(t *testing.T) {
	const compacted = `{"model":"m","messages":[]}`
	resp := `{"id":"r1","choices":[]}`
	for _, c := range []struct {
		name            string
		request         string
		size            int // of the request attribute; < 0: its length
		checkedRequest  string
		checkedResponse string
		want            string // the line's request
		wantProblem     bool
	}{
		{name: "unchecked is compacted", request: spacedRequest, size: -1, want: compacted},
		{name: "checked text goes in as it is", request: spacedRequest, size: -1, checkedRequest: spacedRequest, want: spacedRequest},
		{name: "other checked text: checked as always", request: spacedRequest, size: -1, checkedRequest: compacted, want: compacted},
		{name: "checked response only", request: spacedRequest, size: -1, checkedResponse: resp, want: compacted},
		{name: "cut by a limit: null whatever was checked", request: spacedRequest, size: len(spacedRequest) + 5, checkedRequest: spacedRequest, want: "null", wantProblem: true},
		{name: "checked but not a JSON object text", request: `[1]`, size: -1, checkedRequest: `[2]`, want: "null", wantProblem: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			kvs := spanKVs(payloadKV(semconv.GymtraceRequestBodyKey, c.request, c.size), payloadKV(semconv.GymtraceResponseBodyKey, resp, -1))
			kvs = append(kvs, semconv.GymtraceRolloutIDKey.String("r-1"))
			s := &capture.Span{
				SpanID: trace.SpanID{1}, StartTime: streamStart, EndTime: streamEnd,
				Attributes:     kvLookup(kvs),
				CheckedRequest: c.checkedRequest, CheckedResponse: c.checkedResponse,
			}
			line, err := capture.ModelCallLines{}.NewLine("r-1", s)
			require.NoError(t, err)
			got := string(line.AppendTo(nil))
			assert.Contains(t, got, `"request":`+c.want+`,"response":`+resp+`,`)
			assert.Equal(t, c.wantProblem, len(line.Problems()) > 0, "problems %v", line.Problems())

			// The pieces a large line is written in carry the same bytes.
			streamed, err := capture.ModelCallLines{}.NewLine("r-1", s)
			require.NoError(t, err)
			var pieces strings.Builder
			_, err = streamed.(capture.StreamedLine).WriteTo(nil, func(p []byte) error { pieces.Write(p); return nil })
			require.NoError(t, err)
			assert.Equal(t, got, pieces.String())
		})
	}
}

func TestCheckedBodiesRegistry(t *testing.T) {
	var nilSet *capture.CheckedBodies
	s := capture.Span{SpanID: trace.SpanID{7}, CheckedRequest: "stale", CheckedResponse: "stale"}
	nilSet.SetChecked(&s)
	assert.Empty(t, s.CheckedRequest+s.CheckedResponse, "a nil set has none")

	var c capture.CheckedBodies
	c.SetChecked(&s)
	assert.Empty(t, s.CheckedRequest+s.CheckedResponse, "the zero set has none")

	req, resp := []byte(`{"a":1}`), []byte(`{"b":2}`)
	c.Add(s.SpanID, req, nil)
	c.Add(trace.SpanID{8}, nil, resp)
	c.SetChecked(&s)
	assert.Equal(t, `{"a":1}`, s.CheckedRequest)
	assert.Empty(t, s.CheckedResponse)
	other := capture.Span{SpanID: trace.SpanID{8}}
	c.SetChecked(&other)
	assert.Equal(t, [2]string{"", `{"b":2}`}, [2]string{other.CheckedRequest, other.CheckedResponse})

	c.Remove(s.SpanID)
	c.SetChecked(&s)
	assert.Empty(t, s.CheckedRequest+s.CheckedResponse, "removed")
	c.SetChecked(&other)
	assert.Equal(t, `{"b":2}`, other.CheckedResponse, "the other span is kept")
}

func TestCheckedBodiesConcurrent(t *testing.T) {
	var c capture.CheckedBodies
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			body := []byte(`{"g":` + string(rune('0'+g)) + `}`)
			for i := range 500 {
				id := trace.SpanID{byte(g), byte(i), byte(i >> 8)}
				c.Add(id, body, body)
				s := capture.Span{SpanID: id}
				c.SetChecked(&s)
				if s.CheckedRequest != string(body) || s.CheckedResponse != string(body) {
					t.Errorf("span %v: got %q %q", id, s.CheckedRequest, s.CheckedResponse)
				}
				c.Remove(id)
			}
		})
	}
	wg.Wait()
	s := capture.Span{SpanID: trace.SpanID{1, 1}}
	c.SetChecked(&s)
	assert.Empty(t, s.CheckedRequest)
}

func TestPayloadFactsChecked(t *testing.T) {
	var f capture.PayloadFacts
	compact := []byte(`{"model":"m","messages":[]}`)
	req, raw := f.RequestPayload(compact)
	require.Nil(t, raw)
	assert.True(t, f.Checked(req), "the compact body itself")
	assert.False(t, f.Checked([]byte(string(req))), "equal text elsewhere is not the checked object")
	assert.False(t, f.Checked(nil))

	resp, _ := f.ResponsePayload([]byte("{\n  \"id\": \"r1\"\n}"))
	assert.Equal(t, `{"id":"r1"}`, string(resp))
	assert.True(t, f.Checked(resp), "the object the pass compacted")
	assert.True(t, f.Checked(req), "the request is still checked")

	stream := []byte(`{"id":"r2"}`)
	f.SetStreamResponse(stream, capture.ResponseFacts{})
	assert.False(t, f.Checked(stream), "a reassembled stream was built, not checked")
	assert.False(t, f.Checked(resp), "replaced by the stream's object")

	obj, rawText := f.RequestPayload([]byte(`not json`))
	assert.Nil(t, obj)
	require.NotNil(t, rawText)
	assert.False(t, f.Checked(req), "replaced by a raw body")
}
