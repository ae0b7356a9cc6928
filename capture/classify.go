package capture

import (
	"strings"

	"github.com/gymtrace/gymtrace/semconv"
)

// Terminal states of a stream, as CategoryInput.Terminal takes them (SPEC §4.2, §0 D1, D8).
const (
	TerminalComplete   = "complete"
	TerminalIncomplete = "incomplete"
	TerminalError      = "error"
)

// Transport failures, as CategoryInput.Transport takes them (SPEC §0 D3, D5).
const (
	TransportConnection = "connection" // the upstream connection broke (dial error, read error after the status line)
	TransportTimeout    = "timeout"    // the upstream did not answer or went idle in time
	TransportCancelled  = "cancelled"  // the client went away and the upstream request was cancelled (D3)
	TransportException  = "exception"  // any other failure while producing the response (e.g. a handler panic)
)

// ClassifyStatus maps an HTTP status to its error category (SPEC §3.3 _classify_status): "" (no
// error) below 400; 408 and 504 "timeout"; 429 "rate_limit"; 401 and 403 "auth"; 404
// "not_found"; other 4xx "client_error"; 500 and above "upstream_error".
func ClassifyStatus(status int) string {
	switch {
	case status < 400:
		return ""
	case status == 408 || status == 504:
		return semconv.ErrorCategoryTimeout
	case status == 429:
		return semconv.ErrorCategoryRateLimit
	case status == 401 || status == 403:
		return semconv.ErrorCategoryAuth
	case status == 404:
		return semconv.ErrorCategoryNotFound
	case status < 500:
		return semconv.ErrorCategoryClientError
	}
	return semconv.ErrorCategoryUpstreamError
}

// ClassifyException is the reference's _classify_exception (SPEC §3.3) for an exception class
// name: "timeout" when isTimeout (the exception is a TimeoutError) or the lower-cased name contains
// "timeout"; else "connection" when it contains "conn"; else "exception". Go code has no exception
// classes; it is exported for tools that classify Python failures and for the vectors.
func ClassifyException(className string, isTimeout bool) string {
	name := strings.ToLower(className)
	switch {
	case isTimeout || strings.Contains(name, "timeout"):
		return semconv.ErrorCategoryTimeout
	case strings.Contains(name, "conn"):
		return semconv.ErrorCategoryConnection
	}
	return semconv.ErrorCategoryException
}

// CategoryInput is what [Category] needs to know about a finished exchange.
type CategoryInput struct {
	// Status is the HTTP status the upstream sent (or the exception-derived status of SPEC §3.4);
	// nil when none was received.
	Status *int
	// Terminal is the stream's terminal state: [TerminalComplete], [TerminalIncomplete],
	// [TerminalError], or "" when no terminal event was seen. Callers pass TerminalComplete for a
	// chat stream that finished every choice and ended cleanly (SPEC §0 D8).
	Terminal string
	// SSE reports a text/event-stream response (SPEC §4.1).
	SSE bool
	// BodyNonEmpty reports that response body bytes were received.
	BodyNonEmpty bool
	// ResponseNull reports that the record's response is null (unparsable, non-object or not
	// reassemblable body).
	ResponseNull bool
	// Transport is what ended the exchange abnormally: [TransportConnection], [TransportTimeout],
	// [TransportCancelled], [TransportException], or "" when it ended cleanly.
	Transport string
	// Bounded reports that the capture stopped at a capture bound (SPEC §0 D15): the record holds a
	// prefix of the response, so rules 4 and 5 below (a missing terminal event, a null response)
	// do not apply.
	Bounded bool
}

// Category returns the record's error_category (SPEC §3.3, §4.7, §0 D3/D5/D8), "" for null, by
// the first rule that applies:
//  1. a status of 400 or more: [ClassifyStatus] (it wins over everything, D3/D5);
//  2. a transport failure: its own name ("connection", "timeout", "cancelled", "exception");
//  3. terminal "error" → "upstream_error"; terminal "incomplete" → "incomplete";
//  4. an SSE response without a terminal event → "stream_truncated" (D5; a D8-finished chat
//     stream arrives here as terminal "complete");
//  5. a non-empty body whose response is null → "capture_parse_error".
//
// Rules 4 and 5 never apply to a Bounded capture (SPEC §0 D15).
//
// An unknown Transport value is treated as "exception".
func Category(in CategoryInput) string {
	if in.Status != nil {
		if c := ClassifyStatus(*in.Status); c != "" {
			return c
		}
	}
	switch in.Transport {
	case "":
	case TransportConnection, TransportTimeout, TransportCancelled, TransportException:
		return in.Transport
	default:
		return semconv.ErrorCategoryException
	}
	switch in.Terminal {
	case TerminalError:
		return semconv.ErrorCategoryUpstreamError
	case TerminalIncomplete:
		return semconv.ErrorCategoryIncomplete
	case TerminalComplete:
	default:
		if in.SSE && !in.Bounded {
			return semconv.ErrorCategoryStreamTruncated
		}
	}
	if in.BodyNonEmpty && in.ResponseNull && !in.Bounded {
		return semconv.ErrorCategoryCaptureParseError
	}
	return ""
}
