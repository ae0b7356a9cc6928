// Package e2e holds gymtrace's end-to-end tests: they build the real gymtrace binary, start
// `gymtrace proxy` in front of an in-process fake model server (internal/testkit/fakemodel), call it
// with the official openai-go and anthropic-sdk-go clients through the rollout prefix
// (/ng-rollout/<id>/v1), and check that every client gets the same result as directly against
// the upstream and that every call leaves exactly one record in <capture-dir>/<id>.capture.jsonl
// (SPEC.md §3.1, §3.2, §3.5, §3.6). TestTokenCaptureVLLM runs `gymtrace proxy --token-source vllm`
// in front of the fake vLLM engine under /ng-rollout/<id>/training-token-capture/v1 and checks
// the client's raw bytes, the canonical <id>.tokens.jsonl and the line `gymtrace attach`
// finalizes (docs/TOKENS.md). TestHTMLReportInBrowser opens the file of the real
// `gymtrace report --html` in headless Chromium (chromedp); it needs a Chromium binary and fails
// without one (GYMTRACE_REQUIRE_CHROMIUM=1, as CI sets it, insists on Debian's /usr/bin/chromium).
// TestTypeScriptClients and TestTypeScriptAgent run the README's TypeScript guide (e2e/ts, the
// official openai and @anthropic-ai/sdk packages and the OpenTelemetry JS SDK, compiled with its
// pinned tsc) with node against the binary and a gymtrace-otelcol built from ../collectorext; they
// need node on PATH and `npm ci` run in e2e/ts, and fail without them.
//
// It is a module of its own (STYLE.md: e2e/ keeps the SDK clients out of the root module).
// Run from this directory:
//
//	go test -race -count=1 ./...
//
// The flag -direct-only runs only the client-against-upstream half (no binary, no proxy), for
// working on the fake server or the scenarios while the proxy is being built:
//
//	go test -count=1 ./... -args -direct-only
//
// The flag -in-process serves the proxy in the test process with proxy.New (the handler the
// CLI's proxy command wraps) instead of running the binary, so that -race covers the proxy code
// too; `gymtrace calls` still runs as the binary:
//
//	go test -race -count=1 ./... -args -in-process
package e2e
