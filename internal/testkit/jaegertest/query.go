package jaegertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// DefaultWaitTimeout bounds [Jaeger.WaitForSpans] when ctx has no deadline.
const DefaultWaitTimeout = 30 * time.Second

// pollInterval is the pause between two queries while waiting for spans.
const pollInterval = 50 * time.Millisecond

// WaitForSpans polls GET {QueryURL}/api/traces/{traceID} every 50ms until the trace has at least
// minSpans spans and returns it; a 404 ("trace not found") means "not yet". It waits until ctx ends,
// or DefaultWaitTimeout when ctx has no deadline, then returns an error naming the trace id, the
// span count reached and Jaeger's last answer. A malformed traceID, minSpans < 1 or an answer that
// is neither 200 nor 404 is an error at once.
func (j Jaeger) WaitForSpans(ctx context.Context, traceID string, minSpans int) (*Trace, error) {
	if !isTraceID(traceID) {
		return nil, fmt.Errorf("jaegertest: trace id %q: want 16 or 32 hex digits", traceID)
	}
	if minSpans < 1 {
		return nil, fmt.Errorf("jaegertest: minSpans %d: want at least 1", minSpans)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultWaitTimeout)
		defer cancel()
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	url := j.QueryURL + "/api/traces/" + traceID
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	spans, last := 0, "none"
	for {
		trace, answer, err := fetchTrace(ctx, client, url)
		switch {
		case err != nil && ctx.Err() == nil:
			return nil, fmt.Errorf("jaegertest: trace %s: %w", traceID, err)
		case err == nil && trace != nil && len(trace.Spans) >= minSpans:
			return trace, nil
		case err == nil:
			// Keep the last complete answer: the query cut short by ctx tells nothing.
			last, spans = answer, 0
			if trace != nil {
				spans = len(trace.Spans)
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("jaegertest: trace %s: %d of %d spans before %w; last answer: %s",
				traceID, spans, minSpans, context.Cause(ctx), last)
		case <-tick.C:
		}
	}
}

// fetchTrace queries url once. It returns the trace (nil on 404), a short description of the
// answer for error messages, and an error for anything but 200 or 404.
func fetchTrace(ctx context.Context, client *http.Client, url string) (*Trace, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, "", fmt.Errorf("query: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err.Error(), fmt.Errorf("query: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err.Error(), fmt.Errorf("query: read body: %w", err)
	}
	last := fmt.Sprintf("%s %s", resp.Status, tail(body, 512))
	switch resp.StatusCode {
	case http.StatusNotFound:
		return nil, last, nil
	case http.StatusOK:
	default:
		return nil, last, fmt.Errorf("query: GET %s: %s", url, last)
	}
	trace, err := decodeTraces(body)
	if err != nil {
		return nil, last, fmt.Errorf("query: GET %s: %w", url, err)
	}
	return trace, last, nil
}

// decodeTraces decodes a /api/traces/<id> answer holding one trace; tag values keep their number text.
func decodeTraces(body []byte) (*Trace, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var r tracesResponse
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(r.Errors) > 0 {
		return nil, fmt.Errorf("jaeger error %d: %s", r.Errors[0].Code, r.Errors[0].Msg)
	}
	switch len(r.Data) {
	case 0:
		return nil, errors.New("decode: no trace in data")
	case 1:
	default:
		return nil, fmt.Errorf("decode: %d traces in data, want 1", len(r.Data))
	}
	tr := &r.Data[0]
	for i := range tr.Spans {
		s := &tr.Spans[i]
		if err := normalizeTags(s.Tags); err != nil {
			return nil, fmt.Errorf("decode: span %s: %w", s.SpanID, err)
		}
		for _, l := range s.Logs {
			if err := normalizeTags(l.Fields); err != nil {
				return nil, fmt.Errorf("decode: span %s log: %w", s.SpanID, err)
			}
		}
	}
	for id, p := range tr.Processes {
		if err := normalizeTags(p.Tags); err != nil {
			return nil, fmt.Errorf("decode: process %s: %w", id, err)
		}
	}
	return tr, nil
}

// normalizeTags makes every int64 and float64 value a json.Number: Jaeger writes int64 values as
// JSON strings (so they keep all 64 bits) and floats as JSON numbers.
func normalizeTags(tags []KeyValue) error {
	for i := range tags {
		kv := &tags[i]
		if kv.Type != "int64" && kv.Type != "float64" {
			continue
		}
		var text string
		switch v := kv.Value.(type) {
		case json.Number:
			text = v.String()
		case string:
			text = v
		default:
			return fmt.Errorf("tag %q: %s value %v is %T, want a number or numeric string", kv.Key, kv.Type, v, v)
		}
		var err error
		if kv.Type == "int64" {
			_, err = strconv.ParseInt(text, 10, 64)
		} else {
			_, err = strconv.ParseFloat(text, 64)
		}
		if err != nil {
			return fmt.Errorf("tag %q: %s value %q: %w", kv.Key, kv.Type, text, err)
		}
		kv.Value = json.Number(text)
	}
	return nil
}

// isTraceID reports whether s is 16 or 32 hex digits.
func isTraceID(s string) bool {
	if len(s) != 16 && len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
