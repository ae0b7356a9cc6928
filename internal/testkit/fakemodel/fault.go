package fakemodel

import (
	"net/http"
	"time"
)

// Dialect names one of the three provider APIs the Server answers; the values are the capture
// record's "dialect" values (SPEC.md §1.6).
type Dialect string

// The dialects, by endpoint.
const (
	DialectResponses Dialect = "responses" // POST /v1/responses (OpenAI Responses API)
	DialectChat      Dialect = "chat"      // POST /v1/chat/completions (OpenAI Chat Completions)
	DialectMessages  Dialect = "messages"  // POST /v1/messages (Anthropic Messages)
)

// Call describes one valid model call, as given to a [FaultFunc]. Body and Header belong to the
// call: a FaultFunc may read them and must not modify them.
type Call struct {
	Dialect Dialect     // which endpoint was called
	Model   string      // the request's "model"
	Stream  bool        // the request's "stream"
	Body    []byte      // the request body as received
	Header  http.Header // the request headers
}

// FaultFunc decides, per call, how to spoil its answer; the zero Fault leaves the answer alone.
type FaultFunc func(Call) Fault

// Cut says how a streamed answer stops early (see [Fault.CutAfter]).
type Cut int

// The ways to cut a stream.
const (
	// CutNone sends the whole answer (the default).
	CutNone Cut = iota
	// CutEnd ends the response cleanly after CutAfter events: no terminal event, no [DONE].
	CutEnd
	// CutAbort breaks the connection after CutAfter events (the client sees a read error, never
	// a clean end). For a JSON answer it breaks the connection after half the body.
	CutAbort
	// CutErrorEvent sends the dialect's in-stream error event after CutAfter events, then ends:
	// Responses "event: error" with {"type":"error","code":"server_error",...}, Chat a data line
	// {"error":{...}} (then no [DONE]), Anthropic "event: error" with an overloaded_error.
	CutErrorEvent
)

// Fault changes how one call is answered. Fields combine: Delay applies first, then either the
// error answer (Status or Body set) or the normal answer, cut as Cut says.
type Fault struct {
	// Delay postpones the status line (time to first byte). Default 0.
	Delay time.Duration
	// Status, when non-zero, answers with this HTTP status and the dialect's error body instead
	// of the model answer (Anthropic shape for /v1/messages, OpenAI shape otherwise) with the type
	// and message the provider uses for Status (e.g. 429 → "requests"/"rate_limit_error", 529 →
	// "overloaded_error", 5xx → "server_error"/"api_error"), or Body when set.
	Status int
	// Body, when non-nil, is sent as the whole response body instead (status Status, or 200 when
	// Status is 0), with ContentType (default "application/json").
	Body []byte
	// ContentType is the Content-Type of Body.
	ContentType string
	// Header holds extra response headers (e.g. Retry-After), set on every answer kind.
	Header http.Header
	// Cut stops the answer early; CutAfter is the number of SSE events sent before the cut (0 =
	// before the first event). Cut applies to streamed answers; for JSON answers only CutAbort
	// has an effect.
	Cut      Cut
	CutAfter int
}
