package agentobs

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// ModelCallIDHeader is the response header in which the capture proxy and proxy.CaptureHandler
// return a captured call's model_call_id (32 lowercase hex chars, SPEC §3.1) to the agent.
const ModelCallIDHeader = "X-Gymtrace-Model-Call-Id"

// traceResponseHeader is the W3C Trace Context Level 2 response header naming the server's span:
// "00-<trace id>-<span id>-<flags>".
const traceResponseHeader = "Traceresponse"

// Transport wraps next (http.DefaultTransport when nil) so that every response carrying the
// [ModelCallIDHeader] header is recorded as a model call of the observation the request's context
// carries ([RecordModelCall]): the compaction in progress when there is one, else the invocation.
// When the response also carries a valid W3C Trace Context Level 2 "traceresponse" header (the
// model-call span of the server), the span gets a link to that span too, carrying the same
// attributes as the event. Requests without an invocation in their context, and responses
// without the header, pass through untouched; a recording failure never fails the request. The
// response is returned as next returned it, before its body is read.
//
// Compose it with the agent's client: as the base of proxy.NewHTTPClient
// (http.Client{Transport: agentobs.Transport(nil)}), or around any RoundTripper (otelhttp). It is
// safe for concurrent use when next is, and passes CloseIdleConnections on to next.
func Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{next: next}
}

type transport struct {
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	if id := resp.Header.Get(ModelCallIDHeader); id != "" {
		_ = recordRef(req.Context(), ModelCallRef{ModelCallID: Ptr(id)}, parseTraceResponse(resp.Header.Get(traceResponseHeader)))
	}
	return resp, nil
}

// CloseIdleConnections closes next's idle connections when it can.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RecordModelCall records the model call modelCallID (the capture record's model_call_id, e.g. from
// the [ModelCallIDHeader] response header) as made by the invocation ctx carries and, when ctx is
// inside a compaction in progress, also as one of that compaction's summarizing calls (the
// invocation owns it either way, SPEC §6.5). It adds a
// gymtrace.model_call event (attribute gymtrace.model_call.id) to that span, and the id to the
// gymtrace.model_call.ids list the span gets when it ends. Use it with clients that do not go
// through [Transport].
//
// It returns an error, recording nothing, when modelCallID is empty, when ctx carries no
// invocation, or when the observation has ended. Safe for concurrent use.
func RecordModelCall(ctx context.Context, modelCallID string) error {
	if modelCallID == "" {
		return errors.New("agentobs: record model call: the model_call_id is empty")
	}
	return recordRef(ctx, ModelCallRef{ModelCallID: Ptr(modelCallID)}, trace.SpanContext{})
}

// RecordModelCallRef is [RecordModelCall] for any model-call reference (SPEC §6.2), e.g. a model
// server and the provider's response id when the model_call_id is unknown. ref must be valid
// ([ModelCallRef.Validate]); its fields become the event's gymtrace.model_call.id,
// gen_ai.response.id and gymtrace.model_ref.type/name. Only model_call_ids join the
// gymtrace.model_call.ids list.
func RecordModelCallRef(ctx context.Context, ref ModelCallRef) error {
	if err := ref.Validate(); err != nil {
		return fmt.Errorf("agentobs: record model call: %w", err)
	}
	return recordRef(ctx, ref, trace.SpanContext{})
}

func recordRef(ctx context.Context, ref ModelCallRef, target trace.SpanContext) error {
	s := scopeFrom(ctx)
	if s == nil || s.inv == nil {
		return errNoRecorder
	}
	if s.comp != nil {
		// A compaction's summarizing call is also one of its invocation's calls: the join lets a
		// compaction reference resolve only to a call its own invocation owns (SPEC §6.5, and
		// §8 #98: invocation refs [before, compact, after], compaction refs [compact]).
		if err := s.comp.e.recordCall(s.rec, ref, target); err != nil && !errors.Is(err, errEnded) {
			return err
		}
	}
	if err := s.inv.e.recordCall(s.rec, ref, target); err != nil {
		return fmt.Errorf("agentobs: record model call: invocation %s: %w", s.inv.id, err)
	}
	return nil
}

// parseTraceResponse reads a W3C traceresponse value (version 00); an invalid value gives the zero
// SpanContext.
func parseTraceResponse(v string) trace.SpanContext {
	parts := strings.Split(strings.TrimSpace(v), "-")
	if len(parts) != 4 || parts[0] != "00" {
		return trace.SpanContext{}
	}
	tid, tidErr := trace.TraceIDFromHex(parts[1]) // lowercase hex only, non-zero
	sid, sidErr := trace.SpanIDFromHex(parts[2])
	flags, flagsErr := hex.DecodeString(parts[3])
	if tidErr != nil || sidErr != nil || flagsErr != nil || len(flags) != 1 || hex.EncodeToString(flags) != parts[3] {
		return trace.SpanContext{}
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(flags[0]), Remote: true})
}
