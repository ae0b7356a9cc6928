// Package stream decodes the Server-Sent Events bodies of streamed model calls for capture: it
// frames the bytes as the WHATWG event-stream rules say ([Decoder], SPEC §0 D2), detects each
// dialect's terminal event while the body flows ([Terminal], §4.2 with D1 and D8), and reassembles
// the stream into the response object the capture record stores (§4.4–§4.6 with D9 and D13).
// Dialects are [DialectResponses], [DialectChat] and [DialectMessages].
//
// The proxy uses one [Capture] per response: it forwards each upstream read to the client first,
// then calls [Capture.Feed] with the same bytes. Feed reports the terminal state after each piece,
// so the proxy knows which read completed the terminal event and holds it until the capture record
// is durable (SPEC §0 "Durability contract"). [Capture.Close] applies the end-of-body rules and
// [Capture.Response] returns the reassembled object as compact JSON encoded like orjson.
//
// Only a per-event capture bound ([WithMaxEventBytes], default 64 MiB) limits what is held for
// parsing; forwarding never depends on this package. Malformed traffic never panics and never stops
// decoding: what cannot be used is skipped and counted ([Stats]).
//
// State is per request, there is no package state, and no type here is safe for concurrent use.
package stream
