package main

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/sdk/stream"
)

// Flag names of the proxy's data-path limits.
const (
	terminalGraceFlag      = "terminal-grace"
	requestReadTimeoutFlag = "request-read-timeout"
	maxRequestBytesFlag    = "max-request-bytes"
	idleReadTimeoutFlag    = "idle-read-timeout"
	maxEventBytesFlag      = "max-event-bytes" // SPEC §0 D2's per-event parse bound

	// The capture bounds (SPEC §0 D15).
	maxResponseBytesFlag        = "max-response-bytes"
	maxDecodedBytesFlag         = "max-decoded-bytes"
	maxDecodeRatioFlag          = "max-decode-ratio"
	maxCaptureBytesInFlightFlag = "max-capture-bytes-in-flight"
)

// dataPathOptions are the proxy's data-path limits.
type dataPathOptions struct {
	terminalGrace      time.Duration
	requestReadTimeout time.Duration
	maxRequestBytes    int64
	idleReadTimeout    time.Duration
	maxEventBytes      int

	maxResponseBytes, maxDecodedBytes, maxDecodeRatio, maxCaptureBytesInFlight int64
}

// addDataPathFlags registers the data-path flags on the proxy command.
func addDataPathFlags(cmd *cobra.Command, o *dataPathOptions) {
	fl := cmd.Flags()
	fl.DurationVar(&o.terminalGrace, terminalGraceFlag, proxy.DefaultTerminalGrace,
		"after the terminal SSE event ([DONE], response.completed, message_stop, error), how long to wait for the upstream to end the response "+
			"before the call is recorded and its end released to the client; bytes the upstream sends later are forwarded but not captured "+
			"(a positive duration; to wait for the upstream's end, give one as long as --idle-read-timeout)")
	fl.DurationVar(&o.requestReadTimeout, requestReadTimeoutFlag, proxy.DefaultRequestReadTimeout,
		"time allowed to receive the body of a captured request (answered 408 on expiry, nothing forwarded; never limits the response; a negative value disables it)")
	fl.Int64Var(&o.maxRequestBytes, maxRequestBytesFlag, proxy.DefaultMaxRequestBytes,
		"largest body of a captured request, in bytes (answered 413 beyond, nothing forwarded)")
	fl.DurationVar(&o.idleReadTimeout, idleReadTimeoutFlag, proxy.DefaultIdleReadTimeout,
		"longest wait for the next bytes of an upstream response body; on expiry the upstream request is cancelled, the client's response aborted and the call recorded as timeout")
	fl.IntVar(&o.maxEventBytes, maxEventBytesFlag, stream.DefaultMaxEventBytes,
		"largest SSE event the capture parses, in bytes (SPEC §0 D2); a larger event is forwarded whole but left out of the record's reassembly "+
			"(error_category capture_parse_error) and the rollout is marked incomplete")
	const past = "; past it the response is still forwarded whole, the record keeps the prefix with capture_bound and the rollout is marked incomplete"
	fl.Int64Var(&o.maxResponseBytes, maxResponseBytesFlag, proxy.DefaultMaxResponseBytes,
		"most response bytes one call captures, counted as received before decoding"+past)
	fl.Int64Var(&o.maxDecodedBytes, maxDecodedBytesFlag, proxy.DefaultMaxDecodedBytes,
		"most bytes a Content-Encoding response body (gzip, deflate, br, zstd) is decoded to for capture"+past)
	fl.Int64Var(&o.maxDecodeRatio, maxDecodeRatioFlag, proxy.DefaultMaxDecodeRatio,
		"decoding for capture stops once the decoded size exceeds this multiple of the encoded bytes (a decompression bomb)"+past)
	fl.Int64Var(&o.maxCaptureBytesInFlight, maxCaptureBytesInFlightFlag, proxy.DefaultMaxCaptureBytesInFlight,
		"most captured response bytes (received and decoded) of all calls in flight together; a call that would pass it stops capturing"+past)
}

// sdkOptions validates the flags and returns their proxy options; usage errors name the flag, the
// value and the rule.
func (o dataPathOptions) sdkOptions() ([]proxy.Option, error) {
	if o.terminalGrace <= 0 {
		return nil, usageErrorf("--%s %s must be a positive duration: the longest wait for the upstream to end a response after its terminal event (SPEC §4.2); to wait for the end itself, give one as long as --%s",
			terminalGraceFlag, o.terminalGrace, idleReadTimeoutFlag)
	}
	if o.requestReadTimeout == 0 {
		return nil, usageErrorf("--%s 0 is not allowed: give a positive duration, or a negative one to disable it", requestReadTimeoutFlag)
	}
	if o.maxRequestBytes <= 0 {
		return nil, usageErrorf("--%s %d must be a positive number of bytes", maxRequestBytesFlag, o.maxRequestBytes)
	}
	if o.idleReadTimeout <= 0 {
		return nil, usageErrorf("--%s %s must be a positive duration", idleReadTimeoutFlag, o.idleReadTimeout)
	}
	if o.maxEventBytes <= 0 {
		return nil, usageErrorf("--%s %d must be a positive number of bytes", maxEventBytesFlag, o.maxEventBytes)
	}
	for _, b := range []struct {
		flag string
		v    int64
	}{
		{maxResponseBytesFlag, o.maxResponseBytes}, {maxDecodedBytesFlag, o.maxDecodedBytes},
		{maxDecodeRatioFlag, o.maxDecodeRatio}, {maxCaptureBytesInFlightFlag, o.maxCaptureBytesInFlight},
	} {
		if b.v <= 0 {
			return nil, usageErrorf("--%s %d must be a positive number", b.flag, b.v)
		}
	}
	return []proxy.Option{
		proxy.WithMaxResponseBytes(o.maxResponseBytes),
		proxy.WithMaxDecodedBytes(o.maxDecodedBytes),
		proxy.WithMaxDecodeRatio(o.maxDecodeRatio),
		proxy.WithMaxCaptureBytesInFlight(o.maxCaptureBytesInFlight),
		proxy.WithTerminalGrace(o.terminalGrace),
		proxy.WithRequestReadTimeout(o.requestReadTimeout),
		proxy.WithMaxRequestBytes(o.maxRequestBytes),
		proxy.WithIdleReadTimeout(o.idleReadTimeout),
		proxy.WithMaxEventBytes(o.maxEventBytes),
	}, nil
}

// warn logs the limits that are valid but probably not meant (SPEC §0 D15): an in-flight budget
// smaller than one call's own bound stops a call's capture at the budget while it is the only call
// in flight, so its record says in_flight_budget where the operator expected response_bytes or
// decoded_bytes.
func (o dataPathOptions) warn(logger *slog.Logger) {
	flag, bound := maxResponseBytesFlag, o.maxResponseBytes
	if o.maxDecodedBytes > bound {
		flag, bound = maxDecodedBytesFlag, o.maxDecodedBytes
	}
	if o.maxCaptureBytesInFlight < bound {
		logger.Warn("gymtrace proxy: --"+maxCaptureBytesInFlightFlag+" is smaller than one call's bound (--"+flag+"): a call may stop capturing at the budget "+
			"(capture_bound kind in_flight_budget, SPEC §0 D15) with no other call in flight; lower --"+flag+" to the budget or raise the budget",
			maxCaptureBytesInFlightFlag, strconv.FormatInt(o.maxCaptureBytesInFlight, 10), flag, strconv.FormatInt(bound, 10))
	}
}
