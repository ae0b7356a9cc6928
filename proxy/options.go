package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/sdk/stream"
)

// Defaults of the proxy's upstream timeouts (DESIGN.md "The proxy's upstream request").
const (
	// DefaultDialTimeout bounds connecting to the upstream (TCP and TLS handshake).
	DefaultDialTimeout = 10 * time.Second
	// DefaultResponseHeaderTimeout bounds the wait for the upstream's status line and headers after
	// the request was sent.
	DefaultResponseHeaderTimeout = 15 * time.Minute
	// DefaultIdleReadTimeout bounds the wait for each read of the upstream body after the status
	// line (SPEC §0 D5: an idle read that times out is recorded as "timeout").
	DefaultIdleReadTimeout = 15 * time.Minute
	// DefaultTerminalGrace is how long the proxy waits, after the read that completed a terminal SSE
	// event, for the upstream body to end before it finalizes the call itself ([WithTerminalGrace]).
	// Upstreams end the body within milliseconds of the terminal event, so 250ms never cuts a normal
	// stream, yet bounds the delay an upstream that keeps the response open adds.
	DefaultTerminalGrace = 250 * time.Millisecond
)

// Defaults of the request-side limits of a captured call (the request body is read whole before it
// is forwarded, see [CaptureHandler]).
const (
	// DefaultMaxRequestBytes is the largest captured request body accepted, in bytes (64 MiB,
	// [WithMaxRequestBytes]).
	DefaultMaxRequestBytes = 64 << 20
	// DefaultRequestReadTimeout bounds reading a captured request body ([WithRequestReadTimeout]).
	DefaultRequestReadTimeout = 60 * time.Second
)

// Option configures [CaptureHandler] and [New].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is the resolved configuration of a Handler.
type config struct {
	store      *capture.Store
	captureDir string
	// storeSet, captureDirSet: WithStore / WithCaptureDir was given (with a nil store or an empty
	// directory the error names that option, not a missing one).
	storeSet, captureDirSet bool
	storeOpts               []capture.StoreOption

	captureExporter      sdktrace.SpanExporter // WithCaptureExporter: records made durable by a Collector
	captureExporterSet   bool                  // WithCaptureExporter given (a nil exporter is refused)
	captureExportTimeout time.Duration

	modelServerName string
	spanProcessors  []sdktrace.SpanProcessor
	exportSampler   sdktrace.Sampler
	resource        *resource.Resource
	logger          *slog.Logger
	meterProvider   metric.MeterProvider // nil: no metrics (metrics.go)
	maxEventBytes   int
	corr            correlationConfig // WithRunID, WithUncorrelatedRolloutID (correlation.go)
	spanAttrs       spanAttrConfig    // WithMessageContent, WithGenAIConventions (spanattrs.go)
	redactor        *Redactor         // WithRedaction (redact.go)
	creds           credentialConfig  // WithCredentialRedaction, WithSecretHeaders (credentials.go)

	dialTimeout           time.Duration
	responseHeaderTimeout time.Duration
	idleReadTimeout       time.Duration
	terminalGrace         time.Duration // < 0: disabled
	maxRequestBytes       int64
	requestReadTimeout    time.Duration // < 0: disabled
	bounds                captureBounds // SPEC §0 D15 (capturebounds.go)
	tokens                tokenConfig   // WithTokenSource, WithTokenDir (tokens.go)

	// Test hooks (unexported).
	clock func() (wall time.Time, mono time.Duration)
	newID func() string
}

func newConfig(opts []Option) config {
	c := config{
		exportSampler:         sdktrace.ParentBased(sdktrace.AlwaysSample()),
		dialTimeout:           DefaultDialTimeout,
		responseHeaderTimeout: DefaultResponseHeaderTimeout,
		idleReadTimeout:       DefaultIdleReadTimeout,
		terminalGrace:         DefaultTerminalGrace,
		maxRequestBytes:       DefaultMaxRequestBytes,
		requestReadTimeout:    DefaultRequestReadTimeout,
		bounds:                defaultCaptureBounds(),
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.clock == nil {
		c.clock = monotonicClock()
	}
	if c.newID == nil {
		c.newID = newModelCallID
	}
	if c.maxEventBytes < 1 {
		c.maxEventBytes = stream.DefaultMaxEventBytes // WithMaxEventBytes: below 1 keeps the default
	}
	c.spanAttrs.resolve()
	return c
}

// WithStore makes the handler write capture records to store (SPEC §2). Exactly one of WithStore and
// [WithCaptureDir] is required: capture never silently depends on configuration (DESIGN.md
// "Sampling"). The store is shared, not owned: Shutdown does not affect it. A nil store is an error
// of [CaptureHandler] and [New] naming WithStore(nil).
func WithStore(store *capture.Store) Option {
	return optionFunc(func(c *config) { c.store, c.storeSet = store, true })
}

// WithCaptureDir makes the handler create its own [capture.Store] rooted at dir, which must be an
// absolute path (SPEC §7; created with mkdir -p semantics). File and directory modes default to 0600
// and 0700 ([WithFileMode], [WithDirMode]). Exactly one of [WithStore] and WithCaptureDir is required.
// An empty dir is an error of [CaptureHandler] and [New] naming WithCaptureDir("").
func WithCaptureDir(dir string) Option {
	return optionFunc(func(c *config) { c.captureDir, c.captureDirSet = dir, true })
}

// WithCaptureExporter makes a capture Collector, not the local store, write the capture records: each
// model-call span is exported alone to exp when it ends, and the call's end reaches the client only
// once exp returned nil (gymtrace-otelcol's gymcapture exporter acknowledges after its fsync when it
// runs without a queue or batch processor; see collectorext/config). The store of
// [WithStore]/[WithCaptureDir] is still required for the `.capture.incomplete` marker of every call
// whose export failed or took longer than timeout (≤ 0: 10 s), logged and counted like a failed
// local write. Handler.Shutdown shuts exp down. A nil exp is an error of [CaptureHandler] and [New]
// naming WithCaptureExporter(nil) (it would silently write the records locally instead).
func WithCaptureExporter(exp sdktrace.SpanExporter, timeout time.Duration) Option {
	return optionFunc(func(c *config) {
		c.captureExporter, c.captureExportTimeout, c.captureExporterSet = exp, timeout, true
	})
}

// WithFileMode sets the permission bits of capture files and markers created by the store of
// [WithCaptureDir] (default 0600). It has no effect with [WithStore]. The token store's files get
// the same mode ([WithTokenDir]).
func WithFileMode(mode fs.FileMode) Option {
	return optionFunc(func(c *config) {
		c.storeOpts = append(c.storeOpts, capture.WithFileMode(mode))
		c.tokens.fileMode = mode
	})
}

// WithDirMode sets the permission bits of the capture directory created by [WithCaptureDir]
// (default 0700). It has no effect with [WithStore]. The token store's directory gets the same
// mode ([WithTokenDir]).
func WithDirMode(mode fs.FileMode) Option {
	return optionFunc(func(c *config) {
		c.storeOpts = append(c.storeOpts, capture.WithDirMode(mode))
		c.tokens.dirMode = mode
	})
}

// WithDurability sets how the store of [WithCaptureDir] makes each record durable before the
// call's end is released (SPEC §0 "Durability contract", D17): [capture.DurabilityPerRecord] (the
// default) fsyncs each record in its rollout file, [capture.DurabilityJournal] makes it durable in
// the proxy's own journal (one fdatasync per batch of concurrent calls of any rollouts) and fsyncs
// the rollout files in the background; Handler.Shutdown then fsyncs them and removes the journal.
// Either way the handler first recovers the journals that crashed proxies left in the directory
// ([capture.Store.RecoverJournals]); a recovery error fails construction. It has no effect with
// [WithStore] (build that store with capture.WithDurability and recover it yourself).
func WithDurability(d capture.Durability) Option {
	return optionFunc(func(c *config) { c.storeOpts = append(c.storeOpts, capture.WithDurability(d)) })
}

// WithModelServerName sets the model server name written as the record's model_ref
// {"type":"responses_api_models","name":name} (SPEC §3.1 #3). Default "": model_ref is null.
func WithModelServerName(name string) Option {
	return optionFunc(func(c *config) { c.modelServerName = name })
}

// WithSpanProcessor adds a span processor (typically a BatchSpanProcessor over an OTLP exporter) that
// receives the model-call spans the export sampler ([WithExportSampler]) keeps. It is registered after
// the durable capture processor, is shut down by [Handler.Shutdown], and may be given several times.
// A nil sp is skipped.
func WithSpanProcessor(sp sdktrace.SpanProcessor) Option {
	return optionFunc(func(c *config) {
		if sp != nil {
			c.spanProcessors = append(c.spanProcessors, sp)
		}
	})
}

// WithExportSampler sets the sampler that decides which model-call spans reach the processors of
// [WithSpanProcessor] (and the sampled flag propagated upstream). It never affects capture: every
// model-call span is recorded and written to the capture file (SPEC §0 "Durability contract").
// Default sdktrace.ParentBased(sdktrace.AlwaysSample()); a nil s keeps it.
func WithExportSampler(s sdktrace.Sampler) Option {
	return setUnless(s == nil, s, func(c *config) *sdktrace.Sampler { return &c.exportSampler })
}

// WithResource sets the OpenTelemetry resource of the handler's tracer provider (default, and for
// a nil r: the SDK's default resource, from the environment).
func WithResource(r *resource.Resource) Option {
	return optionFunc(func(c *config) { c.resource = r })
}

// WithLogger sets the logger for capture failures and forwarding problems (default, and for a nil
// l: slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// WithMaxEventBytes sets the SSE capture bound per event, in bytes (SPEC §0 D2; default 64 MiB). An
// event over the bound is dropped from the capture and the rollout marked incomplete; forwarding is
// never bounded. A value below 1 keeps the default.
func WithMaxEventBytes(n int) Option {
	return optionFunc(func(c *config) { c.maxEventBytes = n })
}

// WithDialTimeout bounds connecting to the upstream ([New] only; default [DefaultDialTimeout]).
// A dial that fails is answered 502, one that times out 504 (SPEC §0 D5). Values below 1 keep the default.
func WithDialTimeout(d time.Duration) Option {
	return setUnless(d <= 0, d, func(c *config) *time.Duration { return &c.dialTimeout })
}

// WithResponseHeaderTimeout bounds the wait for the upstream's status line after the request was
// sent ([New] only; default [DefaultResponseHeaderTimeout]); expiry is answered 504 and recorded
// as "timeout" (SPEC §0 D5). Values below 1 keep the default.
func WithResponseHeaderTimeout(d time.Duration) Option {
	return setUnless(d <= 0, d, func(c *config) *time.Duration { return &c.responseHeaderTimeout })
}

// WithIdleReadTimeout bounds each wait for upstream body bytes after the status line ([New]
// only; default [DefaultIdleReadTimeout]). Expiry cancels the upstream request, aborts the client's
// response and records "timeout" (SPEC §0 D5). Values below 1 keep the default.
func WithIdleReadTimeout(d time.Duration) Option {
	return setUnless(d <= 0, d, func(c *config) *time.Duration { return &c.idleReadTimeout })
}

// WithTerminalGrace sets how long the proxy waits for the upstream body to end after the read that
// completed the terminal SSE event (SPEC §4.2, §0 D1; [New] only; default
// [DefaultTerminalGrace]). That read is held until the record is durable, so an upstream that keeps
// the response open would otherwise withhold the answer. When the body has not ended within d, the
// proxy finalizes the call (completed_at is that moment, the record holds every byte received so
// far, the held bytes are released) and forwards what the upstream still sends read by read,
// unheld and uncaptured (its count logged at debug level), until the body ends; an error among
// those bytes aborts the client's response but leaves the record as written. Only an explicit
// terminal event starts the grace (not D8's end of a chat stream without [DONE]).
// d == 0 keeps the default; d < 0 disables the grace (the call ends only with the upstream body).
func WithTerminalGrace(d time.Duration) Option {
	return setUnless(d == 0, d, func(c *config) *time.Duration { return &c.terminalGrace })
}

// WithMaxRequestBytes bounds the body of a captured request, in bytes (default
// [DefaultMaxRequestBytes]), which is read whole before it is forwarded. A body over n bytes (or a
// declared Content-Length over n, before anything is read) is answered 413 with a dialect-shaped
// JSON error ([ErrorBody], code "request_too_large") and logged; nothing is forwarded or written.
// Uncaptured calls stream their body, unbounded. Values below 1 keep the default.
func WithMaxRequestBytes(n int64) Option {
	return setUnless(n <= 0, n, func(c *config) *int64 { return &c.maxRequestBytes })
}

// WithRequestReadTimeout bounds reading the body of a captured request (default
// [DefaultRequestReadTimeout]): the connection's read deadline (http.ResponseController, replacing
// a shorter http.Server ReadTimeout) is now+d while the body is read, then cleared, so it never
// limits the response. A body not received in time is answered 408 with a dialect-shaped JSON error
// (code "request_timeout") and logged; nothing is forwarded or written. A ResponseWriter without
// deadline support reads without one. d == 0 keeps the default; d < 0 disables the deadline.
func WithRequestReadTimeout(d time.Duration) Option {
	return setUnless(d == 0, d, func(c *config) *time.Duration { return &c.requestReadTimeout })
}

// withClock replaces the clock (tests): each call returns the wall time and a monotonic reading;
// it is called once at the start of a call, once at the first non-empty body write and once when
// the body ended.
func withClock(f func() (time.Time, time.Duration)) Option {
	return optionFunc(func(c *config) { c.clock = f })
}

// withModelCallID replaces the model_call_id generator (tests).
func withModelCallID(f func() string) Option {
	return optionFunc(func(c *config) { c.newID = f })
}

// setUnless returns an Option that sets the field of config that field returns to v, unless skip
// (the value keeps the field as it is: the default or an earlier option's value).
func setUnless[T any](skip bool, v T, field func(*config) *T) Option {
	return optionFunc(func(c *config) {
		if !skip {
			*field(c) = v
		}
	})
}

// monotonicClock returns a clock whose monotonic readings are durations since its creation.
func monotonicClock() func() (time.Time, time.Duration) {
	base := time.Now()
	return func() (time.Time, time.Duration) {
		now := time.Now()
		return now, now.Sub(base)
	}
}

// newModelCallID returns uuid4().hex: 32 lowercase hex chars (SPEC §3.1 #1).
func newModelCallID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}
