// Package jaegertest gives gymtrace's tests a real Jaeger (v1.76.0, the OpenTelemetry-Collector-based
// v2 binary built from tools/jaeger by scripts/jaeger.sh) and reads traces back from its query API.
// It is for tests only.
//
// [FromEnv] returns the Jaeger named by the environment that scripts/jaeger.sh start prints
// (JAEGER_QUERY_URL, JAEGER_OTLP_HTTP, JAEGER_OTLP_GRPC, JAEGER_PID), which is how CI shares one
// instance among all packages. Without that environment it starts a private instance for the test
// ([Start]) and stops it when the test ends, unless GYMTRACE_REQUIRE_JAEGER=1, in which case the
// missing environment fails the test: a test that needs Jaeger never skips.
//
// [Jaeger.WaitForSpans] polls GET /api/traces/<trace id> until the spans arrive
// and decode the answer into [Trace]: spans with their operation name, references, tags, logs and
// process. Every address is on the loopback interface; FromEnv refuses any other host.
//
// All functions are safe for concurrent use; a Jaeger value is immutable.
package jaegertest
