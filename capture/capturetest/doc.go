// Package capturetest is the conformance suite every adapter of the capture span writer
// (capture.Writer) runs: the writer itself, the SDK span exporter and durable span processor
// (package exporter) and the Collector exporter gymcapture (collectorext) must all write
// byte-identical files for the same spans: they differ only in how they read a span (DESIGN.md
// "Packages").
//
// A writer under test is wrapped as a [Target]: it is handed finished spans, described
// independently of any span representation by [Span], converts them to its own representation
// (sdktrace.ReadOnlySpan through [ReadOnlySpans], ptrace.Span, ...) and writes to a capture
// directory. [Run] builds one Target per scenario over a fresh directory and checks the files it
// leaves behind against the golden lines of SPEC §3.1 (testdata/vectors/raw_record_golden.json) with
// the span's trace_id and span_id appended (SPEC §0 "Record keys"): exact bytes and the strict read
// back, attribute views that change nothing, ignored spans, the incomplete-marker rules (DESIGN.md
// "Payloads travel on the span"), spans that give no record, concurrent batches and idempotency by
// model_call_id; each scenario is a subtest named for its rule. [Cases] exposes the canonical spans
// and their lines so that a test can also feed two writers the same spans and compare their
// directories with [DirContents].
//
// [RunObservations] is the same kind of suite for observation lines
// (<rollout_id>.observations.jsonl) over [ObservationCases]; every adapter that writes observation
// lines runs it. This package may not import agentobs (layering_test.go), so the cases are data and
// each adapter's test wires its own writer.
//
// The package is for tests only. It loads the test vectors from the repository's testdata folder
// and fails (never skips) when they are missing.
package capturetest
