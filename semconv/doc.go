// Package semconv holds every attribute key, span name part and enum value that gymtrace emits, so no
// other package spells a key.
//
// The gen_ai.* keys follow the OpenTelemetry GenAI semantic conventions at the version that otel-go's
// semconv/v1.41.0 package tracks (SchemaURL below). otel-go dropped the GenAI keys from its own semconv
// packages after v1.41.0, so this package is the source of truth for gen_ai.* in gymtrace.
//
// Keys under gymtrace.* are project keys: they are NOT semantic conventions. They carry what the
// capture record needs (SPEC.md §0 "Spans") and the payloads (DESIGN.md "Payloads travel on the span").
//
// Naming mirrors otel-go's semconv packages: <Namespace><Name>Key is an attribute.Key; a helper named
// without the Key suffix builds the attribute.KeyValue.
package semconv

// SchemaURL is the schema URL of the semantic conventions version these keys track.
const SchemaURL = "https://opentelemetry.io/schemas/1.41.0"
