// Package fleet routes each model-call span to the capture gateway that owns its rollout, for a
// proxy whose records a fleet of gymtrace Collectors (gymtrace-otelcol with the gymcapture
// exporter) writes into one shared capture directory (README "Operator guide").
//
// Ownership is rendezvous (highest random weight) hashing of the span's trace id — a rollout's
// trace id is derived from its rollout id (rollout.TraceID), so every proxy that knows the same
// gateway set picks the same owner without coordination, and a rollout's concurrent calls
// group-commit on one gateway. [Rank] is the order; [Router] is the sdktrace.SpanExporter that
// follows it: it exports to the owner and, when the owner does not answer (connection refused or
// reset, unreachable, the attempt timed out), to the next gateway in the rollout's order, skipping
// gateways that failed recently for a back-off period. A record is still written once: the
// gateways' writers are idempotent by model_call_id and hold the rollout file's flock.
//
// [ParseEndpoints] normalizes the configured endpoints (scheme, host, port, path) so that the
// same gateway spelled two ways hashes the same; [Expand] turns a host name that resolves to
// several addresses (a headless service) into one endpoint per address.
package fleet
