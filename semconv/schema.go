package semconv

// SchemaURL is the schema URL of the semantic conventions version these keys track (v1.41.0, the
// version of otel-go's semconv/v1.41.0; see the package doc). Tracers and meters emitting these
// keys are created with it.
const SchemaURL = "https://opentelemetry.io/schemas/1.41.0"
