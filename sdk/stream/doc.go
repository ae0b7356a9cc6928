// Package stream decodes the Server-Sent Events bodies of streamed model calls for capture: it
// frames the bytes as the WHATWG event-stream rules say, detects each dialect's terminal event
// while the body flows, and reassembles the stream into the response object the capture record
// stores (SPEC.md §4.2–§4.7 with the deviations §0 D1, D2, D8 and D9).
//
// Dialects are the strings [DialectResponses] ("responses", OpenAI Responses), [DialectChat]
// ("chat", OpenAI Chat Completions) and [DialectMessages] ("messages", Anthropic Messages).
//
// The proxy uses one [Capture] per response: it forwards each upstream read to the client first,
// then calls [Capture.Feed] with the same bytes. Feed reports the terminal state after each
// piece, so the proxy knows which read completed the terminal event and holds it until the
// capture record is durable (SPEC §0 "Durability contract"). When the body ends,
// [Capture.Close] applies the end-of-body rules (a final event without its blank line, D8), and
// [Capture.Response] returns the reassembled object as compact JSON encoded like orjson (key
// order as SPEC §4.4–§4.6 give it, numbers as the upstream wrote them).
//
// Framing (D2): lines end at CRLF, LF or CR, even when the pieces split a CRLF; one optional space
// after the field colon is dropped; several data lines join with "\n"; ':' lines are comments.
// There is no line length limit: only a per-event capture bound ([WithMaxEventBytes], default
// 64 MiB) limits what is held for parsing. An event over the bound is counted
// ([Stats.BoundHits]) and loses its data; forwarding never depends on this package.
//
// Terminal events (§4.2 with D1): responses response.completed → complete, response.incomplete →
// incomplete, response.failed and error → error; chat "data: [DONE]" → complete, "event: error"
// or a data JSON object with a non-null "error" member → error; messages message_stop → complete,
// error → error. Responses and messages events are matched by their "event" field, compared
// exactly after the one dropped space, or, when the event has no "event" field, by the data
// object's "type" (D1). The first terminal event wins. At a clean end of body a chat stream
// whose every choice got a non-empty finish_reason is complete (D8).
//
// Malformed traffic never panics and never stops decoding: data that is not a strict JSON object
// is skipped and counted ([Stats.ParseErrors]); objects whose members have types the
// reassembly cannot combine are skipped and counted ([Stats.Skipped]). A chat delta value of
// another JSON type than the documented string is read instead (SPEC §0 D13): content parts give
// their text and thinking, any other value its compact JSON text, null nothing.
//
// State is per request, there is no package state, and no type here is safe for concurrent use.
package stream
