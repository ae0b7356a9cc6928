// Package semconv holds every attribute key, span name part and enum value that gymtrace emits, so no
// other package spells a key.
//
// # Conventions version
//
// The gen_ai.*, error.type, http.* and server.* keys follow the OpenTelemetry semantic conventions
// v1.41.0, the version otel-go's semconv/v1.41.0 package tracks ([SchemaURL]). It is the last
// release that defines the GenAI conventions (they moved to open-telemetry/semantic-conventions-genai
// and otel-go dropped its GenAI* keys from v1.42.0 on), so this package is the source of truth for
// gen_ai.* in gymtrace. Where the newer GenAI conventions differ, [GenAIConventions] selects the
// version from OTEL_SEMCONV_STABILITY_OPT_IN ([StabilityOptInEnv]); keys that exist only in the
// newer conventions (conventions.go) are emitted under both, and the schema URL stays [SchemaURL].
//
// # Project keys
//
// Keys under gymtrace.* are project keys, NOT semantic conventions. They carry what the capture
// record needs (SPEC.md §0 "Spans") and the payloads (DESIGN.md "Payloads travel on the span").
//
// # Naming
//
// As in otel-go's semconv packages: <Namespace><Name>Key is an attribute.Key; a function named
// without the Key suffix builds the attribute.KeyValue (only for attributes gymtrace builds that
// way). Enum values are untyped string constants: the record and the CLI use them as plain strings.
package semconv
