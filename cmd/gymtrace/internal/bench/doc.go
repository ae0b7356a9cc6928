// Package bench measures what capture costs: it runs the same model-call workload against an
// in-process upstream directly, through a plain reverse proxy and through the gymtrace capture proxy,
// and reports throughput, latency, time to first byte, CPU and peak RSS side by side (issue 6). It
// backs `gymtrace bench`.
//
// # Targets
//
// Every workload × concurrency cell measures three targets in turn, each with a fresh client
// transport:
//
//   - direct: the upstream itself, an HTTP server inside the bench process on 127.0.0.1;
//   - plain: a net/http/httputil.ReverseProxy without capture ([ServePlainProxy]), run as a child
//     process (`gymtrace bench-plain-proxy`) so that its CPU and RSS are its own;
//   - capture: the real `gymtrace proxy` as a child process, writing durable capture files to a
//     temporary capture directory.
//
// Each proxy child is started for its cell and stopped (SIGTERM, drained) after it, so the peak RSS
// of a cell is that of one process that served only that cell. Children get the bench's environment
// without OTEL_* variables (no OTLP export), and die with the bench (Linux parent-death signal).
//
// # Workloads
//
// All calls are OpenAI Chat Completions POSTs to /ng-rollout/bench-<i>/v1/chat/completions, where
// i is the load generator's worker index (one rollout file per worker): "small" (a short JSON
// answer), "json20k" (a 20 KiB JSON answer) and "sse200" (a stream of 200 chat.completion.chunk
// events, [DONE] included, 5 ms apart); "sse1m" (a 1 MiB stream of 4 KiB deltas, back to back) runs
// only when named and adds the memory check of the capture proxy's peak RSS against 2.5 × the
// bytes of the responses in flight + 64 MiB ([MemoryCheck]). The token-capture workloads
// "tokens-small" and "tokens-sse200" (also run only when named; "tokens" names both) are answered
// with the fake vLLM engine's answers (package fakemodel; rendered once per distinct request body
// and replayed with the workload's pacing, so the upstream costs every target the same) instead of
// a fixed answer: a short chat answer and a 200-event stream 5 ms apart, called under /ng-rollout/bench-<i>-<k>/training-token-capture/v1
// (k = the worker's call number / 8, a multi-turn rollout's worth of calls, since the token store
// rewrites a rollout's state at each append), with the capture targets run with --token-source
// vllm ([Workload].TokenSource). Every target must return vLLM's answer to the client's own
// request, byte for byte (docs/TOKENS.md §0 T2); every workload's calls are checked so
// ([Workload.Body]). See [Workloads].
//
// # Measurement
//
// A cell's budget is its share of [Config.Duration]: the duration is split among the workloads by
// weight (streams get twice the share of a JSON workload) and then evenly among the concurrency
// levels and the three targets. Workers start calls until the budget is spent; calls in flight then
// complete and count. Throughput adds up each worker's rate (its calls over the time from the start
// to its own last completion; see [TargetResult.Throughput]). JSON workloads first make one
// unmeasured warm-up call per worker (connections are open when measuring starts); streams do not.
// CPU is read from /proc/<pid>/stat (utime+stime, 10 ms resolution) around the measured window,
// peak RSS is VmHWM from /proc/<pid>/status; both are absent on systems without /proc. The header reports the fsync latency measured in the capture
// directory, the physical floor of the capture proxy's durable write.
//
// After the capture target has stopped, every rollout file of the cell is read tolerantly
// ([capture.Store.ReadAvailableModelCallRecords]) and the record count is compared with the number
// of calls that received a complete response, warm-up included; for a token workload the token
// captures are read too (tokens.Store.Inspect: one entry per such call, no intent without an
// entry, no incomplete rollout, [TokenVerification]); [Report.Check] fails on a mismatch.
//
// # Concurrency
//
// [Run] is not meant to run twice at the same time on one machine (the numbers would be
// meaningless), but nothing breaks if it does. Everything it starts (servers, children, goroutines,
// temporary files) is stopped or removed before it returns.
package bench
