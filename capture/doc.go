// Package capture owns gymtrace's capture file format and store: the raw exchange record written
// once per captured model call (SPEC.md §3.1), the per-rollout capture store (§2), the derived
// ModelCallRecord (§3.2, with token usage §3.5 and tool calls/reasoning §3.6), the error category
// rules (§3.3, §4.7 and gymtrace's D3/D5/D8), and metrics aggregation (§5.2).
//
// # On-disk shape
//
// A capture file <dir>/<rollout_id>.capture.jsonl holds one JSON object per line, UTF-8, each line
// terminated by "\n", in durable append order. Each object is an [Exchange] with its keys in the
// order of SPEC §3.1: model_call_id, dialect, model_ref, started_at, completed_at, latency_ms,
// latency_ttft_ms, status_code, error_category, request, response, then request_raw and
// response_raw only when present, then gymtrace's trace_id and span_id (SPEC §0 "Record keys").
// Lines are written the way NeMo Gym's orjson writes them: compact, nothing HTML-escaped, non-ASCII
// and U+2028/U+2029 raw, floats in shortest round-trip form with a decimal point. The request, and a
// non-streamed response, are kept as the sender's own JSON text with only insignificant whitespace
// removed (SPEC §0 D6). Gym's readers read these files, and gymtrace reads files Gym wrote.
//
// Reading goes the other way: a line (any JSON object, from either writer) becomes a
// [ModelCallRecord] through [BuildModelCallRecord], which applies Gym's derivation and validation
// rules exactly; a line it rejects is what SPEC §2.5 counts as unreadable.
//
// # Span attributes
//
// [ExchangeAttributes] and [ExchangeFromAttributes] are the one mapping between a record and its
// model-call span (SPEC §0 "Spans"), shared by the SDK exporter and the Collector exporter. Besides
// what the record needs, the span gets the GenAI attributes the request and response carry
// (gen_ai.request.* parameters, usage, finish reasons), named per [WithConventions], and with
// [WithMessageContent] the conversation as gen_ai.input.messages / gen_ai.output.messages.
//
// # The span writer
//
// [Span] is the one neutral view of a finished span (ids, parent, times, kind, status, attributes,
// events, links, dropped counts) that every span source adapts to: the otel-go SDK in package
// exporter and in agentobs, pdata in collectorext. [Writer] is the one span writer: it routes a
// span to <dir>/<rollout_id><suffix>, appends its line through the store's group commit, never
// appends a line whose key is already in the file (a record's model_call_id, checked under the
// file's flock against the file, so across processes and retries), marks the rollout incomplete
// when a record is not written whole, returns one [Outcome] per span and counts it as an OTel metric
// ([WithMeterProvider]). Each kind of line plugs in a [LineMapping]: [ModelCallLines] for capture
// records here, the observation line from package agentobs.
//
// # Concurrency
//
// [Exchange], [ModelCallRecord] and [Metrics] are plain values: encoding and derivation functions
// are pure and safe for concurrent use on distinct values. The store serializes appends per file
// (flock plus one write per line) and never blocks one rollout on another; see its own docs.
package capture
