// Package rederive rebuilds capture records offline with today's code: the library behind
// `gymtrace rederive`. A record keeps the bytes a streamed (or unparsable) response arrived as in
// response_raw (SPEC.md §3.1 #13); [Line] recomputes one record's response and the error categories
// that follow from those bytes, and [Run] does it for whole capture files into another capture
// directory (capture.Store); the originals are never modified.
//
// What is recomputed (SPEC §3.3, §4.2–§4.7, §0 D1/D2/D5/D8/D9):
//   - response: for a server-sent event stream, sdk/stream's reassembly of response_raw; for any
//     other body, capture.ResponsePayload of response_raw (a body that is now a strict JSON object
//     becomes the response, and response_raw is dropped as §3.1 writes it);
//   - error_category, only when it is null, stream_truncated, capture_parse_error, incomplete or
//     upstream_error without an HTTP status of 400 or more: capture.Category of the status, the
//     stream's terminal state, SSE-ness and whether the response is null.
//
// Everything else is kept with its exact text: other keys and their order, categories set by an
// HTTP status ≥ 400, the transport categories cancelled, connection and timeout (their response is
// still rebuilt, as the partial reassembly D3 stores), the exception path (response null by rule),
// records without response_raw, a null response whose non-stream response_raw holds U+FFFD (the
// writer replaced the body's ill-formed UTF-8 there, SPEC D6, so the text is not the bytes that
// failed to parse; re-reading it would turn a malformed answer into a clean one), and records Line
// cannot interpret (status_code or error_category of
// another JSON type, an unknown dialect), which are copied and counted.
//
// A stream is inferred from the record: a stream_truncated category, a non-null response next to
// response_raw (§3.1 keeps both only for streams), or a null response with a response_raw that is
// not a JSON object but frames as at least one server-sent event. A record the current code writes
// is reproduced byte for byte, and Line is idempotent. Functions are safe for concurrent use on
// distinct inputs; Run starts no goroutines.
package rederive
