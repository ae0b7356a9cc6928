// Package exporter turns model-call spans into capture records (SPEC.md §3.1, §0 "Spans" and
// "Durability contract"): the durable span processor [DurableProcessor] used by the capture
// middleware, the span exporter [Exporter] for pipelines that deliver spans in batches, and
// [WithoutPayloads], which strips payload attributes before OTLP export.
//
// Both are thin adapters: each span's [capture.Span] view (capture/sdkspan.FromReadOnly) goes to the one span
// writer, [capture.Writer] with the record mapping [capture.ModelCallLines]. A model-call span is a
// span carrying both gymtrace.rollout.id and gymtrace.model_call.id; every other span is ignored.
// Its record is rebuilt from the span's attributes (the one record <-> attribute mapping), gets the
// span's trace_id and span_id, and is appended to <capture dir>/<rollout_id>.capture.jsonl: one JSON
// object per line, UTF-8, newline-terminated, keys in SPEC §3.1 order, flock + write + fsync,
// group-committed across concurrent calls to the same file, never twice for one model_call_id. A write that fails, or a record whose payload was cut by an
// attribute limit (written with that payload null; detected by its ".size" attribute, or by the
// span's dropped-attribute count), marks the rollout incomplete
// (<rollout_id>.capture.incomplete), is logged and is counted (the writer's OTel counters, [WithMeterProvider]):
// capture never fails silently.
//
// Both types are safe for concurrent use. Writes run on a context detached from the caller's
// (context.WithoutCancel), so a cancelled request never loses its record.
package exporter
