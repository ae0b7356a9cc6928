package semconv

import "go.opentelemetry.io/otel/attribute"

// Capture-gateway routing metrics (package fleet: a proxy exporting its records to several
// gymtrace Collectors). Not semantic conventions.
const (
	// GymtraceCaptureGatewayExportsName counts export attempts to capture gateways (unit
	// {attempt}), by [GymtraceCaptureGatewayKey] and [GymtraceCaptureGatewayOutcomeKey].
	GymtraceCaptureGatewayExportsName = "gymtrace.capture.gateway.exports"
	// GymtraceCaptureGatewayExportsUnit is the unit of gymtrace.capture.gateway.exports.
	GymtraceCaptureGatewayExportsUnit = "{attempt}"
	// GymtraceCaptureGatewayExportsDescription is the description of gymtrace.capture.gateway.exports.
	GymtraceCaptureGatewayExportsDescription = "Export attempts to capture gateways, by gateway and outcome."
)

// GymtraceCaptureGatewayKey is the normalized endpoint of a capture gateway (fleet.Endpoint.Key),
// e.g. "http://10.0.0.7:4318". Not a semantic convention.
const GymtraceCaptureGatewayKey = attribute.Key("gymtrace.capture.gateway")

// GymtraceCaptureGatewayOutcomeKey is how one export attempt to a gateway ended. Not a semantic
// convention.
const GymtraceCaptureGatewayOutcomeKey = attribute.Key("gymtrace.capture.gateway.outcome")

// gymtrace.capture.gateway.outcome values.
const (
	// GymtraceCaptureGatewayOutcomeOK: the gateway acknowledged the export.
	GymtraceCaptureGatewayOutcomeOK = "ok"
	// GymtraceCaptureGatewayOutcomeUnanswered: the gateway did not answer (refused, reset,
	// unreachable, attempt timeout); the span went on to the next gateway of its rollout's order.
	GymtraceCaptureGatewayOutcomeUnanswered = "unanswered"
	// GymtraceCaptureGatewayOutcomeError: the gateway answered with an error; the span is not sent
	// elsewhere (another gateway would refuse it the same way) and the call's rollout is marked
	// incomplete by the proxy.
	GymtraceCaptureGatewayOutcomeError = "error"
)
