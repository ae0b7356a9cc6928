// Package proxy connects agents and model servers to gymtrace's per-rollout model-call capture.
// Rollout identity (ids, the URL prefix, trace ids, correlation rules, SPEC §1) lives in package
// rollout; this package applies it:
//
//   - Capture (SPEC §1.6, §3, §4, §0 "Durability contract", D3–D5, D12): CaptureHandler wraps any Go
//     model server and New forwards to one configured upstream. Both strip the rollout prefix
//     (refusing what D12 refuses with HTTP 400, InvalidRolloutIDBody), record every call to the
//     three captured endpoints (CapturedDialect) as a CLIENT span "chat {model}" in the rollout's
//     trace, and write its capture record durably before the client can observe the end of the
//     call. Bytes reach the client unchanged, read by read, 1xx informational responses included
//     (informational.go); capture never depends on sampling.
//   - Correlation without the prefix: rollout.FromRequest reads the rollout.Header header, else the
//     baggage member; a captured call naming no rollout is logged, counted
//     (gymtrace.capture.uncorrelated_calls) and captured under WithUncorrelatedRolloutID's id when
//     given. WithRunID puts spans and files in a run namespace.
//   - Span attributes (SPEC §0 "Spans"; capture.ExchangeAttributes is the one mapping): the GenAI
//     conventions (WithGenAIConventions, WithMessageContent), with no attribute length or count
//     limit, so payloads on the span are always whole.
//   - Agent side (DESIGN.md "Trace per rollout"): StartRollout emits the rollout root span with the
//     rollout's fixed ids (with RolloutIDGenerator) and NewHTTPClient sends traceparent and
//     baggage, so rollout root → agent spans → HTTP client spans → model-call spans form one tree.
//     A Go agent points its model client at rollout.BaseURLForRun(base, runBody) + "/v1".
//   - Training token capture (docs/TOKENS.md §0 T1–T8): calls under the
//     /ng-rollout/<id>/training-token-capture/ segment also write Gym's token store (package
//     tokens): an intent before forwarding, then the token entry or the rollout's incomplete mark
//     before the end of the call is released. WithTokenSource says what the upstream is (vLLM,
//     SGLang, a Gym model server, or none); for vLLM and SGLang the proxy adds only what the client's
//     chat request lacks and restores the answer, so the client gets the upstream's answer to its
//     own request (tokens.go, tokenadapter.go, tokenwriter.go; answerread.go reads an answer as
//     json.loads does, tokenlimits.go applies the entry's T7 limits, tokensamples.go the n rule).
package proxy
