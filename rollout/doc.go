// Package rollout owns rollout identity: the rollout id and its run namespace, the trace id and
// root span id derived from them, the "/ng-rollout/<id>" URL prefix (build and parse, with the
// training-token-capture segment), the correlation rules that find a request's rollout (path
// prefix, header, W3C baggage; the agent's gates from the global config) and the run-body readers.
//
// The rules are NeMo Gym's (SPEC §1) with gymtrace's deviations D10 (ids match in full) and D12
// (one id rule at every entry point that names a rollout: the proxy, the Collector exporter and
// the CLI; see [ValidateID]). Run bodies and global configs are read as JSON with Python's
// json.loads, str(), int() and truthiness semantics, as Gym's agents read them.
//
// The package depends on the standard library and the OpenTelemetry API only, so that every
// writer (proxy, exporters, agents, CLI) can use it without pulling in the proxy. Every function
// is pure or reads only its arguments: safe for concurrent use.
package rollout
