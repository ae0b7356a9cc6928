// Package capturetest is the conformance suite every adapter of the capture span writer
// (capture.Writer) runs: the writer itself, the SDK span exporter and durable span processor
// (github.com/gymtrace/gymtrace/exporter) and the Collector exporter gymcapture
// (github.com/gymtrace/gymtrace/collectorext) all turn model-call spans into capture records, and
// all must write byte-identical files for the same spans (DESIGN.md "the SDK exporter and the
// collector exporter differ only in how they read span attributes").
//
// A writer under test is wrapped as a [Target]: it is handed finished spans, described
// independently of any span representation by [Span] (name, kind, times, attributes, dropped
// attribute count, trace and span ids), converts them to its own representation
// (sdktrace.ReadOnlySpan, ptrace.Span, ...) and writes to a capture directory. [Run] builds one
// Target per scenario over a fresh directory and checks the files it leaves behind:
//
//   - the exact bytes of every line, against the golden lines of SPEC §3.1
//     (testdata/vectors/raw_record_golden.json) with the span's trace_id and span_id appended
//     (SPEC §0 "Record keys"), one file per rollout, lines in span order;
//   - the round trip: the file reads back strictly ([capture.Store.Read],
//     [capture.Store.ReadModelCallRecords]) into the records the golden lines derive;
//   - that the attribute view does not matter: opt-in message content, the other GenAI conventions
//     version and unrelated attributes change nothing on disk;
//   - that spans which are not model calls are ignored, and write nothing;
//   - the incomplete-marker rules (DESIGN.md "Payloads travel on the span"): a payload cut by an
//     attribute length limit, stripped, or not a JSON object is written as null and marks the
//     rollout incomplete (<rollout_id>.capture.incomplete); so does a span that lost attributes to a
//     count limit;
//   - that a model-call span the record cannot be rebuilt from fails with an error while the other
//     spans of its batch are written, and marks its rollout incomplete;
//   - that concurrent batches for one rollout all land, one whole line each;
//   - idempotency by model_call_id: a record whose call is already in the rollout file is not
//     appended again (a retried span, a second span of the same call, concurrent ones).
//
// [Cases] exposes the canonical spans and their lines so that a test can also feed two writers the
// same spans and compare their directories with [DirContents].
//
// [RunObservations] is the same kind of suite for observation lines
// (<rollout_id>.observations.jsonl): [ObservationCases] are an invoke_agent, an execute_tool, a
// compaction and a sandbox span with the exact lines they must give; every adapter that writes
// observation lines runs it (agentobs's ObservationProcessor, gymcapture with observations
// enabled). This package may not import agentobs (layering_test.go), so the cases are data and
// each adapter's test wires its own writer. [ReadOnlySpans] hands the suite's spans to otel-go SDK
// adapters.
//
// The package is for tests only. It loads the test vectors from the repository's testdata folder
// and fails (never skips) when they are missing.
package capturetest
