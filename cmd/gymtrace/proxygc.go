package main

import (
	"os"
	"runtime/debug"
)

// proxyGCPercent is the garbage collector target of `gymtrace proxy` when the environment sets no
// GOGC: the proxy's live heap is mostly the buffers of the responses in flight (a stream's bytes
// and its reassembled text until the record is durable), and 50 instead of Go's 100 lets the heap
// grow to 1.5 times that instead of twice. Measured with `gymtrace bench --workload sse1m` at
// concurrency 256 (256 MiB of streams in flight): peak RSS about 690 MiB instead of 790–850 MiB,
// within issue 6's bound of 2.5 × in-flight + 64 MiB = 704 MiB, for no measurable CPU per call.
const proxyGCPercent = 50

// setProxyGC applies proxyGCPercent unless GOGC is set (the operator's choice wins).
func setProxyGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(proxyGCPercent)
	}
}
