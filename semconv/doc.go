// Package semconv holds every attribute key, span name part and enum value that gymtrace emits, so no
// other package spells a key.
//
// # Conventions version
//
// The gen_ai.*, error.type, http.* and server.* keys follow the OpenTelemetry semantic conventions
// v1.41.0 — the version otel-go's go.opentelemetry.io/otel/semconv/v1.41.0 package tracks, with
// schema URL https://opentelemetry.io/schemas/1.41.0 ([SchemaURL]). It is the last release that
// defines the GenAI conventions in open-telemetry/semantic-conventions: they moved to
// open-telemetry/semantic-conventions-genai afterwards and otel-go dropped its GenAI* keys from
// semconv v1.42.0 on, so this package is the source of truth for gen_ai.* in gymtrace.
//
// Where the newer GenAI conventions differ, [GenAIConventions] selects the version:
// [GenAIConventionsV1_41] by default, [GenAIConventionsLatestExperimental] when the environment
// variable OTEL_SEMCONV_STABILITY_OPT_IN ([StabilityOptInEnv]) lists gen_ai_latest_experimental
// (the transition plan of the GenAI conventions). The latest experimental conventions emit
// gen_ai.usage.cache_write.input_tokens instead of gen_ai.usage.cache_creation.input_tokens and an
// int gen_ai.request.top_k. Keys that exist only in the newer conventions and have no v1.41.0
// counterpart (gen_ai.conversation.compacted, gen_ai.request.previous_response.id,
// gen_ai.request.reasoning.level) are emitted under both, wherever they apply; the tracer's schema
// URL stays [SchemaURL] (the newer conventions have no released schema URL).
//
// # Project keys
//
// Keys under gymtrace.* are project keys: they are NOT semantic conventions. They carry what the
// capture record needs (SPEC.md §0 "Spans") and the payloads (DESIGN.md "Payloads travel on the
// span"); project metric names are in metrics.go.
//
// # Naming
//
// Naming mirrors otel-go's semconv packages: <Namespace><Name>Key is an attribute.Key; a function
// named without the Key suffix builds the attribute.KeyValue (only for the attributes gymtrace
// builds that way; the others are set through their key). Enum values (operation names,
// provider names, dialects, error categories, gap codes) are untyped string constants, because the
// capture record and the CLI use them as plain strings too.
package semconv
