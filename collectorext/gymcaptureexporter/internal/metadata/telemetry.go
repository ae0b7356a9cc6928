package metadata

// SpansMetric is the name of the exporter's span counter (the Collector's own exporter metrics
// carry the same "otelcol_" prefix). It is not declared in ../metadata.yaml: the counter is
// created by the exporter's telemetry, not by mdatagen.
const SpansMetric = "otelcol_exporter_gymcapture_spans"

// OutcomeKey is the attribute of [SpansMetric] naming what happened to a span.
const OutcomeKey = "outcome"
