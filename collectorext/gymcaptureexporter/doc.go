// Package gymcaptureexporter is the OpenTelemetry Collector exporter `gymcapture`: it writes the
// capture record of every model-call span it receives to <capture_dir>/<rollout_id>.capture.jsonl
// and, with `observations: true` (the default), the line of every agent-observation span to
// <capture_dir>/<rollout_id>.observations.jsonl: byte for byte the files gymtrace's SDK exporter
// (package exporter) and agentobs.ObservationProcessor write for the same spans (SPEC.md §2, §3.1;
// DESIGN.md "Scale-out", "Observations are spans first"). README.md documents the behaviour, every
// configuration key with its default and rule, the durability setup and the telemetry;
// config.schema.json is the section's JSON Schema, kept in step with Config by TestConfigSchema*.
//
// The exporter is a thin adapter: each pdata span becomes the neutral capture.Span view (spanView)
// and goes to the one span writer, capture.Writer, with capture.ModelCallLines for records (a span
// with a string gymtrace.rollout.id and a gymtrace.model_call.id) and agentobs.ObservationLines for
// observation lines (agentobs.ObservationKind). The writer never appends a line twice (a record by
// its model_call_id, an observation line by its span), so a retry or a second Collector writes
// nothing new. capture/capturetest's conformance suites run against this exporter and the SDK's
// adapters and prove their files identical.
//
// A payload that cannot be used whole, or a span that lost attributes to a count limit, gives a
// record with that payload null and marks the rollout incomplete. A span that gives no line (a
// required attribute missing or mistyped, an unsafe rollout id, SPEC §0 D12) or whose file name the
// file system refuses (ENAMETOOLONG) is a permanent error for that span only; I/O errors are retryable, and exporterhelper retries only the failed spans. Observation
// failures never mark the capture file incomplete.
//
// Durability: every line is appended through capture.Store's group commit (flock, one write,
// fsync). With the sending queue disabled (the default) and no batch processor in the pipeline,
// the OTLP request is acknowledged only after the fsync of its records, which keeps SPEC §0's
// durability contract end to end (collectorext/config/gymtrace-otelcol.yaml).
//
// Telemetry and lifecycle: the span writers count on the Collector's MeterProvider under the
// names the SDK's writers use (gymtrace.capture.writer.*, .unattributed included).
// Start creates capture_dir with dir_mode; Shutdown is safe without Start and when called twice;
// spans received after Shutdown are not written, the model-call spans' rollouts are marked
// incomplete and an error is returned. The exporter is safe for concurrent use.
//
// metadata.yaml is the component's metadata; go generate runs mdatagen v0.159.0 (the version the
// module proxy serves) from its own tools module, tools/mdatagen, so its dependencies never enter
// this module, writing internal/metadata, generated_component_test.go, generated_package_test.go
// and README.md's status table (scripts/test.sh checks them against a fresh run). It uses go run,
// not go tool: go tool takes -modfile but not -mod, and -mod=readonly keeps GOFLAGS=-mod=mod from
// rewriting tools/mdatagen/go.mod.
package gymcaptureexporter

//go:generate go run -mod=readonly -modfile=../../tools/mdatagen/go.mod go.opentelemetry.io/collector/cmd/mdatagen metadata.yaml
