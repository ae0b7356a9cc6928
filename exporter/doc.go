// Package exporter turns model-call spans into capture records (SPEC.md §3.1, §0 "Spans" and
// "Durability contract"): the durable span processor [DurableProcessor] used by the capture
// middleware (and [NewForwardingProcessor], whose records a capture Collector makes durable), the
// span exporter [Exporter] for pipelines that deliver spans in batches, and [WithoutPayloads],
// which strips payload attributes before OTLP export.
//
// They are thin adapters: each span's [capture.Span] view (sdkspan.FromReadOnly) goes to the one
// span writer, [capture.Writer] with [capture.ModelCallLines], which appends the record of a
// model-call span (one carrying gymtrace.rollout.id and gymtrace.model_call.id; other spans are
// ignored) to <capture dir>/<rollout_id>.capture.jsonl durably, never twice for one model_call_id.
// A write that fails, or a record whose payload was cut by an attribute limit (written with that
// payload null), marks the rollout incomplete (<rollout_id>.capture.incomplete), is logged and is
// counted (the writer's OTel counters, [WithMeterProvider]): capture never fails silently.
//
// All types are safe for concurrent use. Writes run on a context detached from the caller's
// (context.WithoutCancel), so a cancelled request never loses its record.
package exporter
