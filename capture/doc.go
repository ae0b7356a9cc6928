// Package capture owns gymtrace's capture file format and store: the raw exchange record written
// once per captured model call (SPEC.md §3.1), the per-rollout capture store (§2), the derived
// ModelCallRecord (§3.2, with token usage §3.5 and tool calls/reasoning §3.6), the error category
// rules (§3.3, §4.7 and gymtrace's D3/D5/D8), and metrics aggregation (§5.2).
//
// # On-disk shape
//
// A capture file <dir>/<rollout_id>.capture.jsonl holds one [Exchange] per line, in durable append
// order, keys in the order of SPEC §3.1 (then gymtrace's trace_id and span_id, SPEC §0 "Record
// keys"), written the way NeMo Gym's orjson writes them ([Exchange.AppendJSON]); the request, and a
// non-streamed response, keep the sender's own JSON text with only insignificant whitespace removed
// (SPEC §0 D6). Gym's readers read these files, and gymtrace reads files Gym wrote: a line (any
// JSON object, from either writer) becomes a [ModelCallRecord] through [BuildModelCallRecord],
// which applies Gym's derivation and validation rules exactly; a line it rejects is what SPEC §2.5
// counts as unreadable.
//
// # Span attributes and the span writer
//
// [ExchangeAttributes] and [ExchangeFromAttributes] are the one mapping between a record and its
// model-call span (SPEC §0 "Spans"); besides what the record needs, the span gets the GenAI
// attributes the request and response carry, named per [WithConventions], and with
// [WithMessageContent] the conversation. [Span] is the one neutral view of a finished span that
// every span source adapts to (the otel-go SDK in packages exporter and agentobs, pdata in
// collectorext), and [Writer] the one span writer: it appends each span's line, made by a
// [LineMapping] ([ModelCallLines] for capture records, the observation line from package agentobs),
// through the store's group commit, never twice for one key, and returns one [Outcome] per span.
//
// # Concurrency
//
// [Exchange], [ModelCallRecord] and [Metrics] are plain values: encoding and derivation functions
// are pure and safe for concurrent use on distinct values. The store serializes appends per file
// (flock plus one write per line) and never blocks one rollout on another; see its own docs.
package capture
