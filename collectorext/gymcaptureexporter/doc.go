// Package gymcaptureexporter is the OpenTelemetry Collector exporter `gymcapture`: it writes the
// capture record of every model-call span it receives to <capture_dir>/<rollout_id>.capture.jsonl,
// the same files, byte for byte, as gymtrace's SDK exporter (github.com/gymtrace/gymtrace/exporter)
// writes for the same spans (SPEC.md §2, §3.1; DESIGN.md "Scale-out"), and the line of every
// agent-observation span to <capture_dir>/<rollout_id>.observations.jsonl, the same bytes as the
// SDK's agentobs.ObservationProcessor (DESIGN.md "Observations are spans first").
//
// # Records
//
// The exporter is a thin adapter: each pdata span becomes the neutral capture.Span view (spanView)
// and goes to the one span writer, capture.Writer, which the SDK's processors use too. A model-call
// span is one carrying a string gymtrace.rollout.id and a gymtrace.model_call.id; other spans are
// ignored (counted). The record is rebuilt from the span's attributes and times by
// capture.ModelCallLines (the one record <-> attribute mapping), through a small
// capture.AttributeLookup over the span's pcommon.Map; the span's trace_id and span_id are
// appended (SPEC §0 "Record keys"). A record whose model_call_id is already in the rollout file (a
// retry, a second Collector) is not appended again. Each capture file holds one JSON
// object per line, UTF-8, newline-terminated, keys in SPEC §3.1 order. capture/capturetest's
// conformance suite runs against this exporter and the SDK exporter and proves their files
// identical.
//
// A payload that cannot be used whole (cut by an attribute length limit, stripped, not a JSON
// object) or a span that lost attributes to a count limit gives a record with that payload null
// and marks the rollout incomplete (<rollout_id>.capture.incomplete). A model-call span whose record
// cannot be rebuilt (a required attribute missing or mistyped, an unsafe rollout id) is a permanent
// error for that span only (consumererror.NewPermanent); the other spans of the batch are written.
// I/O errors are retryable: exporterhelper retries only the failed spans.
//
// # Observations
//
// An agent-observation span is one agentobs.ObservationKind recognises from the GenAI
// conventions: gen_ai.operation.name invoke_agent (an AgentInvocation) or execute_tool (a
// ToolCallObservation, with gen_ai.tool.call.id), a span with gymtrace.sandbox.role (a
// SandboxObservation), or gen_ai.conversation.compacted=true without an operation name (a
// ContextCompactionObservation); its model-call references are its gymtrace.model_call.ids,
// gymtrace.model_call events and links (SPEC §6.2). With `observations: true` (the default) each
// such span carrying a string gymtrace.rollout.id is reduced to its line
// (agentobs.ObservationLines plugged into capture.Writer; a span whose line is already in the file
// is not appended again) and appended durably, so spans from an agent in any
// language, sent over OTLP, build the same ng_agent_observations bundle (agentobs.ReadBundle,
// gymtrace attach) as the Go recorder's. An observation span without a rollout id is ignored
// (counted, logged); one whose rollout id is not a safe file name is a permanent error for that
// span; I/O errors are retryable for the failed spans only. Observation failures never mark the
// capture file incomplete.
//
// # Durability
//
// Every record is appended through capture.Store's group commit: flock, one write, fsync, group-committed
// with concurrent records of the same file; different rollouts never wait for each other. A record
// whose payloads reach capture.StreamedLineBytes (128 KiB) is the same line written in 64 KiB pieces
// under the same lock (capture.Store.AppendStream), so it is never held whole a second time. The
// exporter's sending queue is disabled by default; with the queue disabled and no batch processor
// in the pipeline, ConsumeTraces returns, and the OTLP receiver acknowledges the request, only
// after the fsync of its records. A model server that exports its capture spans synchronously
// (a SimpleSpanProcessor over an OTLP exporter) therefore keeps SPEC §0's durability contract end
// to end. See collectorext/config/gymtrace-otelcol.yaml.
//
// # Configuration
//
//	exporters:
//	  gymcapture:
//	    capture_dir: /abs/shared/captures   # required, absolute
//	    dir_mode: "0700"                    # default; octal string
//	    file_mode: "0600"                   # default; octal string
//	    include_payloads: true              # default
//	    observations: true                  # default; agent-observation lines
//	    timeout: 5s                         # exporterhelper, per attempt
//	    sending_queue:
//	      enabled: false                    # default: acknowledge after fsync
//	    retry_on_failure:
//	      enabled: true                     # default; I/O errors only
//
// README.md lists every key with its default and rule; config.schema.json is the section's JSON
// Schema, kept in step with Config by TestConfigSchemaKeys, TestConfigSchemaDefaults and
// TestConfigSchemaVerdicts.
//
// # Telemetry and lifecycle
//
// The exporter has no counters of its own: its span writers count on the Collector's
// MeterProvider under the names the SDK's writers use, gymtrace.capture.writer.spans (by
// gymtrace.capture.line_kind and gymtrace.capture.outcome; a span received after Shutdown is
// failed), gymtrace.capture.writer.duplicates, gymtrace.capture.writer.bytes and, with
// observations, gymtrace.observations.unattributed (observation spans without a rollout id;
// project README, OpenTelemetry). Start creates capture_dir with dir_mode; Shutdown is safe
// without Start and when called twice; spans received after Shutdown are not written, the
// model-call spans' rollouts are marked incomplete and an error is returned. The exporter is safe
// for concurrent use.
//
// # Metadata
//
// metadata.yaml is the component's metadata in the Collector's mdatagen format. go generate runs
// mdatagen v0.159.0 (the version the module proxy serves; this module builds against collector
// v0.165.0) as a Go tool of its own module, tools/mdatagen, so that its dependencies never enter
// this module's go.mod. It writes internal/metadata/generated_status.go (Type, ScopeName,
// TracesStability), generated_component_test.go (factory type, config struct, create, start,
// consume and shutdown with metadata.yaml's tests config), generated_package_test.go (goleak)
// and the status table of README.md. The generated code builds against v0.165.0 unchanged.
// scripts/test.sh fails if the committed files differ from a fresh run. (go run, not go tool: go
// tool takes -modfile but not -mod, and -mod=readonly keeps GOFLAGS=-mod=mod from rewriting
// tools/mdatagen/go.mod.)
package gymcaptureexporter

//go:generate go run -mod=readonly -modfile=../../tools/mdatagen/go.mod go.opentelemetry.io/collector/cmd/mdatagen metadata.yaml
