package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/exporter"
	"github.com/gymtrace/gymtrace/internal/drain"
	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/sdk/stream"
	"github.com/gymtrace/gymtrace/semconv"
)

// instrumentationName is the tracer name of the model-call spans.
const instrumentationName = "github.com/gymtrace/gymtrace/proxy"

// Handler is the capture middleware (SPEC §1.6, §3, §4, §0): an http.Handler that strips the
// rollout prefix from every request and records each call to one of the three model endpoints of a
// rollout as a model-call span and a durable capture record. Build it with [CaptureHandler] (over
// any model server handler) or [New] (over the built-in forwarder to one upstream). Its own
// TracerProvider sends every span to the durable capture processor (package exporter) and those the
// export sampler keeps to the processors of [WithSpanProcessor]; it never sets OpenTelemetry globals.
//
// ServeHTTP is safe for concurrent use. After [Handler.Shutdown], every request is answered 503 and
// nothing is forwarded (a capture proxy never forwards calls it cannot capture). A nil or zero
// Handler (not built by New or CaptureHandler) forwards and records nothing: ServeHTTP answers 500
// and Shutdown returns [ErrHandlerNotBuilt].
type Handler struct {
	next  http.Handler
	cfg   config
	store *capture.Store
	// ownStore: the store was opened by WithCaptureDir, so Shutdown closes it.
	ownStore   bool
	tp         *sdktrace.TracerProvider
	tracer     trace.Tracer
	durable    *exporter.DurableProcessor
	checked    *capture.CheckedBodies // the bodies a call's pass checked, for durable (endSpan)
	prop       propagation.TextMapPropagator
	metrics    *callMetrics    // nil without WithMeterProvider (metrics.go)
	tok        *tokenCapture   // training token capture (tokens.go)
	budget     *inFlightBudget // the captured bytes of all calls in flight (SPEC §0 D15)
	nearMisses nearMissLog     // the near-miss shapes logged (nearmiss.go)

	fwd        *forwarder // New only
	serverAttr []attribute.KeyValue

	gate         drain.Gate    // captured calls in flight; closed by Shutdown
	inflight     inFlightCalls // the captured calls whose span has not ended (inflight.go)
	endMu        sync.RWMutex  // held (read) around span.End; Shutdown takes it to stop the provider
	providerDown bool          // guarded by endMu
	shutdownOnce sync.Once
	shutdownErr  error
}

// CaptureHandler wraps next, any Go model server handler, with capture (SPEC §1.6, §4.1):
//
//   - A request whose decoded path starts with /ng-rollout/<id>/ (optionally followed by
//     training-token-capture/) has the prefix stripped before next sees it: r.URL.Path becomes the
//     rest, r.URL.RawPath the client's own escaping of it (re-escaped when that is not possible).
//   - A prefix that [rollout.ParseRequestPath] refuses (SPEC §0 D12: an id failing
//     [rollout.ValidateID], a percent-encoded separator in the prefix as sent, a "." or ".."
//     segment after it) is answered 400 with [InvalidRolloutIDBody]; nothing is forwarded or
//     written.
//   - Calls to /v1/responses, /v1/chat/completions and /v1/messages ([CapturedDialect]) under a
//     prefix are captured, other paths are served uncaptured; an unprefixed call is captured when
//     its rollout.Header or baggage names a rollout (or under [WithUncorrelatedRolloutID]).
//   - A path that is almost a captured endpoint ([rollout.ClassifyNearMiss]: "/v1/v1/messages",
//     a missing "/v1", a trailing slash, an empty id, an encoded separator after the prefix, ...)
//     is served as above and logged once per shape with the likely fix, every call counted in
//     gymtrace.capture.near_miss_calls ([WithMeterProvider]).
//
// A captured call reads the request body whole (replayed to next; bounded by [WithMaxRequestBytes]
// and [WithRequestReadTimeout], answered 413 / 408 beyond), streams next's response to the client
// write by write, and writes the record before the client can see the end of the call (SPEC §0
// "Durability contract"). The response carries the header X-Gymtrace-Model-Call-Id.
//
// Exactly one of [WithStore] and [WithCaptureDir] is required. The error names the offending
// option or value: WithStore(nil) and WithCaptureDir("") are refused as such, not as a missing
// option.
func CaptureHandler(next http.Handler, opts ...Option) (*Handler, error) {
	if next == nil {
		return nil, errors.New("proxy capture handler: next handler is nil")
	}
	return newHandler(next, newConfig(opts))
}

func newHandler(next http.Handler, cfg config) (_ *Handler, err error) {
	if err := cfg.corr.validate(); err != nil {
		return nil, fmt.Errorf("proxy capture handler: %w", err)
	}
	store, ownStore := cfg.store, false
	switch {
	case cfg.storeSet && store == nil:
		return nil, errors.New("proxy capture handler: WithStore(nil): the capture store must not be nil")
	case cfg.captureExporterSet && cfg.captureExporter == nil:
		return nil, errors.New("proxy capture handler: WithCaptureExporter(nil): the capture exporter must not be nil (leave the option out to write the records to the store)")
	case cfg.spanAttrs.convSet && cfg.spanAttrs.conv > semconv.GenAIConventionsLatestExperimental:
		return nil, fmt.Errorf("proxy capture handler: WithGenAIConventions(%d): unknown conventions version: want semconv.GenAIConventionsV1_41 or semconv.GenAIConventionsLatestExperimental", cfg.spanAttrs.conv)
	case cfg.captureDirSet && cfg.captureDir == "":
		return nil, errors.New(`proxy capture handler: WithCaptureDir(""): the capture directory must not be empty (an absolute path)`)
	case cfg.storeSet && cfg.captureDirSet:
		return nil, errors.New("proxy capture handler: both WithStore and WithCaptureDir given; use exactly one")
	case store == nil && cfg.captureDir == "":
		return nil, errors.New("proxy capture handler: no capture store: WithStore or WithCaptureDir is required (capture never depends on configuration)")
	case store == nil:
		s, err := openCaptureDir(cfg.corr.storeDir(cfg.captureDir), cfg.storeOpts, cfg.logger)
		if err != nil {
			return nil, fmt.Errorf("proxy capture handler: %w", err)
		}
		store, ownStore = s, true
		defer func() {
			if err != nil {
				err = errors.Join(err, s.Close())
			}
		}()
	}
	var durable *exporter.DurableProcessor
	checked := new(capture.CheckedBodies)
	expOpts := []exporter.Option{exporter.WithLogger(cfg.logger), exporter.WithMeterProvider(cfg.meterProvider), exporter.WithCheckedBodies(checked)}
	if cfg.captureExporter != nil {
		durable, err = exporter.NewForwardingProcessor(store, cfg.captureExporter,
			append(expOpts, exporter.WithForwardTimeout(cfg.captureExportTimeout))...)
	} else {
		durable, err = exporter.NewDurableProcessor(store, expOpts...)
	}
	if err != nil {
		return nil, fmt.Errorf("proxy capture handler: %w", err)
	}
	tpOpts := []sdktrace.TracerProviderOption{
		sdktrace.WithSampler(recordAlways{export: cfg.exportSampler}),
		sdktrace.WithRawSpanLimits(spanLimits()),
		sdktrace.WithSpanProcessor(durable),
	}
	for _, sp := range cfg.spanProcessors {
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(sampledOnly{next: sp}))
	}
	if cfg.resource != nil {
		tpOpts = append(tpOpts, sdktrace.WithResource(cfg.resource))
	}
	metrics, err := newCallMetrics(cfg.meterProvider)
	if err != nil {
		return nil, fmt.Errorf("proxy capture handler: %w", err)
	}
	tok, err := newTokenCapture(cfg, store.Dir(), cfg.meterProvider)
	if err != nil {
		return nil, fmt.Errorf("proxy capture handler: %w", err)
	}
	tp := sdktrace.NewTracerProvider(tpOpts...)
	return &Handler{
		metrics:  metrics,
		tok:      tok,
		budget:   &inFlightBudget{limit: cfg.bounds.inFlight},
		next:     next,
		cfg:      cfg,
		store:    store,
		ownStore: ownStore,
		tp:       tp,
		tracer:   tp.Tracer(instrumentationName, trace.WithSchemaURL(semconv.SchemaURL)),
		durable:  durable,
		checked:  checked,
		prop:     propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}, nil
}

// ErrHandlerNotBuilt is the error of a nil or zero [Handler]'s Shutdown, and the text of its
// ServeHTTP's 500 answer.
var ErrHandlerNotBuilt = errors.New("gymtrace: proxy.Handler used without proxy.New or proxy.CaptureHandler")

// unbuilt reports a nil or zero handler.
func (h *Handler) unbuilt() bool { return h == nil || h.tracer == nil }

// Store returns the capture store the handler writes to (nil for a nil or zero Handler).
func (h *Handler) Store() *capture.Store {
	if h == nil {
		return nil
	}
	return h.store
}

// TracerProvider returns the handler's own tracer provider (for tests and for adding spans to the
// same pipeline; nil for a nil or zero Handler). Spans of other tracers are not captured.
func (h *Handler) TracerProvider() *sdktrace.TracerProvider {
	if h == nil {
		return nil
	}
	return h.tp
}

// Shutdown stops accepting calls (later requests are answered 503), waits for the captured calls in
// flight to write their records, then shuts the tracer provider down, flushing the durable processor
// and the processors of [WithSpanProcessor]. Call it after the http.Server finished its in-flight
// calls.
//
// When ctx ends first, Shutdown stops waiting: before it returns, the rollout of every captured call
// whose record is not yet written has its <rollout_id>.capture.incomplete marker (SPEC §2.6) on
// stable storage, and each such call with a span is counted as a lost record,
// gymtrace.capture.writer.spans{gymtrace.capture.line_kind="model_call",gymtrace.capture.outcome="failed"}
// ([WithMeterProvider]; a call still reading its request body is counted when its span ends). A
// process may exit then and lose no call silently. The abandoned calls go on: their clients still
// get their answers, but their records are never written (the marker stays; a call ending later
// marks again and logs), and they count in no other metric (gymtrace.capture.calls, bytes and the
// GenAI histograms are recorded only after a record was written). The error (errors.Is ctx's
// error) names how many calls were abandoned; the tracer provider is then shut down with the same
// ended ctx, so not every span processor may have been shut down (the error says so).
//
// It runs once; later calls return the first result. The store of [WithCaptureDir] is closed last (a
// journaled one fsyncs its rollout files and removes its journal, [WithDurability]); a store given
// with [WithStore] is the caller's. Safe for concurrent use with ServeHTTP.
func (h *Handler) Shutdown(ctx context.Context) error {
	if h.unbuilt() {
		return ErrHandlerNotBuilt
	}
	h.shutdownOnce.Do(func() {
		var errs []error
		drainErr := h.gate.Drain(ctx)
		var left []*inFlightCall
		h.endMu.Lock() // no span is ending: every call in flight is either recorded or in h.inflight
		h.providerDown = true
		if drainErr != nil {
			left = h.inflight.abandon()
		}
		h.endMu.Unlock()
		var markErrs []error
		if drainErr != nil {
			markErrs = h.abandonInFlight(left) // before anything else can fail or block
		}
		tpErr := h.tp.Shutdown(ctx)
		processorsCut := drainErr != nil && errors.Is(tpErr, drainErr)
		if drainErr != nil {
			errs = append(errs, inFlightError(drainErr, len(left), markErrs, processorsCut))
		}
		if tpErr != nil && !processorsCut {
			errs = append(errs, tpErr)
		}
		if h.fwd != nil {
			if t, ok := h.fwd.transport.(interface{ CloseIdleConnections() }); ok {
				t.CloseIdleConnections()
			}
		}
		if h.ownStore {
			if err := h.store.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		switch {
		case len(errs) == 1 && drainErr != nil:
			h.shutdownErr = errs[0] // inFlightError names the handler itself
		case len(errs) > 0:
			h.shutdownErr = fmt.Errorf("proxy capture handler shutdown: %w", errors.Join(errs...))
		}
	})
	return h.shutdownErr
}

// openCaptureDir recovers the journals crashed proxies left in dir (SPEC §0 D17), logging what it
// recovered and what it left alone, then opens the store of [WithCaptureDir] with opts.
func openCaptureDir(dir string, opts []capture.StoreOption, logger *slog.Logger) (*capture.Store, error) {
	s, err := capture.NewStore(dir, append(slices.Clone(opts), capture.WithDurability(capture.DurabilityPerRecord))...)
	if err != nil {
		return nil, err
	}
	rec, err := s.RecoverJournals()
	if err != nil {
		return nil, err
	}
	if rec.Journals > 0 {
		logger.Info("gymtrace capture: recovered the journals of crashed writers", "capture_dir", dir,
			"journals", rec.Journals, "records", rec.Records, "appended", rec.Appended, "torn_bytes", rec.TornBytes)
	}
	for _, w := range rec.Warnings() {
		logger.Warn("gymtrace "+w, "capture_dir", dir)
	}
	return capture.NewStore(dir, opts...)
}

// endSpan ends the model-call span, which makes the durable processor write the record (or mark the
// rollout incomplete), and takes call c out of the handler's in-flight set; it reports true. When
// the provider is already shut down (Shutdown abandoned c, inflight.go), the span is not ended: the
// rollout is marked incomplete (again), the span counted as a record not written unless Shutdown
// counted it, and endSpan reports false. The request and response objects that facts' pass split
// from the bodies (already compact strict JSON) are registered for the durable processor while the
// span ends, so that its line copies them without a second check.
func (h *Handler) endSpan(c *inFlightCall, span trace.Span, end time.Time, ex *capture.Exchange, facts *capture.PayloadFacts, rolloutID, id string) (recorded bool) {
	h.endMu.RLock()
	defer h.endMu.RUnlock()
	if !h.providerDown {
		if req, resp := checkedOnly(facts, ex.Request), checkedOnly(facts, ex.Response); req != nil || resp != nil {
			sid := span.SpanContext().SpanID()
			h.checked.Add(sid, req, resp)
			defer h.checked.Remove(sid)
		}
		span.End(trace.WithTimestamp(end))
		h.inflight.remove(c)
		return true
	}
	if ro, ok := span.(sdktrace.ReadOnlySpan); ok && h.inflight.countOnce(c) {
		// Abandoned before its span started: counted (and its rollout marked) now.
		_ = h.durable.Abandon(ro, errAbandoned) // a marker error is logged there
		return false
	}
	h.markIncomplete(slog.LevelError, "call ended after shutdown; record not written, marking the rollout incomplete", rolloutID, id)
	return false
}

// checkedOnly returns obj when facts' pass checked it (capture.PayloadFacts.Checked), else nil.
func checkedOnly(facts *capture.PayloadFacts, obj []byte) []byte {
	if facts.Checked(obj) {
		return obj
	}
	return nil
}

// markIncomplete logs msg with the call's ids and marks its rollout incomplete (SPEC §2.3).
func (h *Handler) markIncomplete(level slog.Level, msg, rolloutID, id string, attrs ...any) {
	h.cfg.logger.Log(context.Background(), level, "gymtrace capture: "+msg, append([]any{"rollout_id", rolloutID, "model_call_id", id}, attrs...)...)
	if err := h.store.MarkIncomplete(rolloutID); err != nil {
		h.cfg.logger.Error("gymtrace capture: mark incomplete failed", "rollout_id", rolloutID, "error", err)
	}
}

// ServeHTTP implements http.Handler (see [CaptureHandler]).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.unbuilt() {
		writeJSON(w, http.StatusInternalServerError, ErrorBody(r.URL.Path, "api_error", ErrHandlerNotBuilt.Error(), "internal_error"))
		return
	}
	if h.gate.Closed() {
		writeShutDown(w, r)
		return
	}
	if h.fwd != nil && !h.fwd.accepts(w, r) {
		return
	}
	p, ok, err := rollout.ParseRequestPath(r.URL.Path, r.URL.EscapedPath())
	if !ok {
		h.noteNearMiss(r.Context(), r.URL.Path, r.URL.EscapedPath()) // "/ng-rollout//v1/..." (nearmiss.go)
		h.serveUnprefixed(w, r)                                      // header or baggage correlation (correlation.go)
		return
	}
	if err != nil {
		status, body := InvalidRolloutIDBody(p.Rest, err)
		h.warnRefusedID(r, err)
		writeRefusal(w, r, status, body)
		return
	}
	r2 := stripPrefix(r, p.Rest)
	dialect := CapturedDialect(p.Rest)
	if dialect == "" || r.URL.RawPath != "" { // a near miss, or an escaped path (an encoded separator?)
		h.noteNearMiss(r.Context(), r.URL.Path, r.URL.EscapedPath())
	}
	if dialect == "" {
		if p.TokenCapture {
			h.tok.markUnobserved(p.ID, p.Rest) // before forwarding (TOKENS.md §1.3 step 2)
		}
		h.next.ServeHTTP(w, r2)
		return
	}
	if !h.gate.Enter() {
		writeShutDown(w, r2)
		return
	}
	defer h.gate.Leave()
	h.serveCaptured(w, r2, p.ID, dialect, p.TokenCapture)
}

// writeShutDown answers a request that arrives after Shutdown.
func writeShutDown(w http.ResponseWriter, r *http.Request) {
	writeRefusal(w, r, http.StatusServiceUnavailable, ErrorBody(r.URL.Path, "api_error", "gymtrace: capture handler is shut down", "shutting_down"))
}

// writeRefusal answers r with a JSON body the handler makes itself before (or instead of) reading
// its request body whole. When a body may be left unread, the connection is closed after the
// answer (HTTP/1: Connection: close) and its read deadline set to now: net/http would otherwise
// read the rest of the body (up to 256 KiB, with no deadline of its own) before closing, and a
// client that withholds it (Expect: 100-continue, a stalled upload) would hold the connection, its
// goroutine and its descriptor for as long as it likes.
func writeRefusal(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	unread := r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
	if unread && r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
	writeJSON(w, status, body)
	if unread {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
}

// writeJSON answers with a JSON body the handler makes itself.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// stripPrefix returns a shallow copy of r whose URL path is rest (SPEC §1.6). RawPath is the suffix
// of the client's escaped path that decodes to rest, so the client's escaping is kept; when there is
// none, the path is re-escaped (SPEC §0 D12).
func stripPrefix(r *http.Request, rest string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path = rest
	u.RawPath = escapedSuffix(r.URL.EscapedPath(), rest)
	if u.RawPath == (&url.URL{Path: rest}).EscapedPath() {
		u.RawPath = ""
	}
	r2.URL = &u
	r2.RequestURI = u.RequestURI()
	return r2
}

// escapedSuffix returns the suffix of the escaped path that starts with "/" and decodes to rest, or "".
func escapedSuffix(escaped, rest string) string {
	for i := 0; i < len(escaped); i++ {
		if escaped[i] != '/' || len(escaped)-i < len(rest)/3 {
			continue
		}
		if dec, err := url.PathUnescape(escaped[i:]); err == nil && dec == rest {
			return escaped[i:]
		}
	}
	return ""
}

// serveCaptured runs one captured call (SPEC §3.1, §4.1, §0 "Durability contract").
// tokenCapture: the call came under the training-token-capture segment (TOKENS.md §0 T1).
func (h *Handler) serveCaptured(w http.ResponseWriter, r *http.Request, rolloutID, dialect string, tokenCapture bool) {
	startWall, startMono := h.cfg.clock()
	id := h.cfg.newID()
	c := h.inflight.add(rolloutID, id)
	defer h.inflight.remove(c)                                   // a call that ends without a span (a refusal), or a panic
	body, readErr, refused := h.readRequestBody(w, r, rolloutID) // 413/408 answered (requestbody.go)
	if refused {
		return
	}
	call := &callState{bodyErr: readErr}
	secrets := h.cfg.creds.secrets(r.Header) // read before next sees the headers (credentials.go)
	var tcall *tokenCall
	if tokenCapture {
		// Refusals (n != 1, a finalized rollout) and the intent come before forwarding (T3, T5).
		if tcall, refused = h.tok.begin(w, r.URL.Path, body, rolloutID, id, dialect); refused {
			return
		}
	}

	ctx := h.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, links := rollout.ID{Run: h.cfg.corr.runID, Rollout: rolloutID}.ParentForModelCall(ctx)
	ctx, span := h.tracer.Start(ctx, semconv.GenAIOperationNameChat,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(startWall),
		trace.WithLinks(links...),
		trace.WithAttributes(
			semconv.GenAIOperationNameKey.String(semconv.GenAIOperationNameChat),
			semconv.GenAIProviderNameKey.String(semconv.ProviderForDialect(dialect)),
			semconv.GymtraceRolloutIDKey.String(rolloutID),
			semconv.GymtraceModelCallIDKey.String(id),
			semconv.GymtraceDialectKey.String(dialect),
		))
	h.inflight.started(c, span)
	r2 := r.WithContext(ctx)
	sent := body // the request body as forwarded (the token adapter's additions included)
	if readErr == nil && tcall.injects() && tcall.ad.active() {
		sent = tcall.ad.requestBody(body)
		r2.Header = r.Header.Clone()
		r2.Header.Set("Accept-Encoding", "identity") // the answer is edited (T2)
	}
	if readErr == nil {
		r2.Body = io.NopCloser(bytes.NewReader(sent))
		r2.ContentLength = int64(len(sent))
		r2.TransferEncoding = nil
		r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(sent)), nil }
	} else {
		// Replay what arrived, then the same error, so next sees the client's broken body.
		r2.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{readErr}))
	}

	budget := newCallBudget(&h.cfg.bounds, h.budget)
	defer budget.release() // after the record was written (SPEC §0 D15)
	cw := newCaptureWriter(w, call, dialect, id, h.cfg.clock, h.cfg.maxEventBytes, budget)
	defer cw.closeDecoder()
	serve := h.next.ServeHTTP
	if h.fwd != nil {
		// The built-in forwarder reports to the call's state (the transport break, the terminal grace).
		serve = func(w http.ResponseWriter, r *http.Request) { h.fwd.serve(w, r, call) }
	}
	var hw http.ResponseWriter = cw
	if tcall.injects() && readErr == nil {
		tcall.tw = newTokenWriter(cw, tcall.ad.restore, tcall.ad.dialect, budget.bounds.maxResponse, h.tok.maxAnswer)
		hw = tcall.tw
	}
	pv, stack, panicked := runHandler(serve, hw, r2)
	if tcall != nil && tcall.tw != nil {
		tcall.tw.finish(!panicked)
	}
	endWall, endMono := h.cfg.clock()

	transport, _ := call.reported()
	forwarderAbort := panicked && pv == http.ErrAbortHandler && transport != ""
	userPanic := panicked && !forwarderAbort
	if userPanic {
		transport = panicTransport(pv)
	}
	if !panicked && transport == "" && cw.clientGone(r.Context()) {
		transport = transportCancelled
	}
	if !panicked && transport == "" && cw.shortOfLength(r.Method) {
		// A handler of [CaptureHandler] that wrote less than its Content-Length: the client's read
		// breaks as for a short upstream body (the forwarder reports that one itself).
		transport = transportConnection
	}
	clean := !panicked && transport == ""
	wrote := cw.finish(!panicked)

	var facts capture.PayloadFacts // what the attributes read, found by the pass that split each body
	ex := h.exchange(cw, body, readErr != nil, &facts, id, dialect, startMono, endMono, transport, clean, userPanic)
	if readErr != nil {
		h.cfg.logger.Warn("gymtrace capture: request body cut short by the client; recorded with request_raw only",
			"rollout_id", rolloutID, "model_call_id", id, "received_bytes", len(body), "content_length", r.ContentLength, "error", readErr)
	}
	var tokenAttrs []attribute.KeyValue
	if tcall != nil {
		// Durable before the span ends and the held end of the call is released (T5).
		end := callEnd{complete: clean && readErr == nil, cancelled: transport == transportCancelled, bound: ex.CaptureBound != nil}
		if ex.StatusCode != nil {
			end.status = *ex.StatusCode
		}
		tokenAttrs = tcall.commit(ex.Response, end, endWall, sent, h.sender(r2))
	}
	// Before the span and the file (redact.go, credentials.go); a payload it edits is read again.
	h.cfg.redactor.withSecrets(secrets).redactExchange(&ex)
	attrBuf := getCallAttrs() // given back once the span and the metrics have read it
	attrs := capture.AppendExchangeAttributes(*attrBuf, &ex, append(slices.Clip(h.cfg.spanAttrs.opts), capture.WithPayloadFacts(&facts))...)
	attrs = append(attrs, semconv.GymtraceRolloutIDKey.String(rolloutID))
	if h.cfg.captureExporter == nil { // the durable processor writes the record here
		attrs = append(attrs, semconv.GymtraceCaptureRecordedKey.Bool(true))
	}
	attrs = append(attrs, h.serverAttr...)
	attrs = append(attrs, tokenAttrs...)
	span.SetAttributes(attrs...)
	if m, ok := lastAttr(attrs, semconv.GenAIRequestModelKey); ok && m.AsString() != "" {
		span.SetName(semconv.ChatSpanName(m.AsString()))
	}
	if ex.ErrorCategory != "" {
		span.SetStatus(codes.Error, ex.ErrorCategory)
	}
	if ex.ErrorCategory == semconv.ErrorCategoryConnection || ex.ErrorCategory == semconv.ErrorCategoryTimeout {
		// The client sees a 502/504 or a cut answer: the operator must see it too.
		h.cfg.logger.Warn("gymtrace capture: upstream call failed", "error_category", ex.ErrorCategory,
			"rollout_id", rolloutID, "path", r.URL.Path, "model_call_id", id)
	}
	recorded := h.endSpan(c, span, endWall, &ex, &facts, rolloutID, id)
	h.markIncompleteIfLossy(cw, ex.CaptureBound, rolloutID, id, clean)
	if recorded { // an abandoned call counts only as a record not written (Shutdown)
		h.metrics.recordCall(ctx, attrs, &ex)
	}
	putCallAttrs(attrBuf, attrs)

	switch {
	case userPanic && !wrote:
		// Nothing reached the client yet: answer like net/http would, with a JSON error.
		h.cfg.logger.Error("gymtrace capture: model server handler panicked", "rollout_id", rolloutID, "model_call_id", id, "panic", fmt.Sprint(pv), "stack", string(stack))
		w.Header().Set(modelCallIDHeader, id)
		writeJSON(w, http.StatusInternalServerError, ErrorBody(r.URL.Path, "api_error", "internal server error", "internal_error"))
	case panicked:
		if userPanic && pv != http.ErrAbortHandler {
			h.cfg.logger.Error("gymtrace capture: model server handler panicked after the response started", "rollout_id", rolloutID, "model_call_id", id, "panic", fmt.Sprint(pv), "stack", string(stack))
		}
		cw.release()
		// The client's response must not end cleanly (SPEC §0 D5): abort it.
		panic(http.ErrAbortHandler)
	default:
		cw.release()
		call.forwardTail(cw) // an upstream body that outlived the terminal grace (bodycopy.go)
	}
}

// exchange builds the raw record of a finished call (SPEC §3.1, §3.3, §4.7, §0 D3–D6).
func (h *Handler) exchange(cw *captureWriter, body []byte, bodyCut bool, facts *capture.PayloadFacts, id, dialect string, startMono, endMono time.Duration, transport string, clean, userPanic bool) capture.Exchange {
	ex := capture.Exchange{
		ModelCallID: id,
		Dialect:     dialect,
		LatencyMS:   capture.RoundMS(durationMS(endMono - startMono)),
	}
	if h.cfg.modelServerName != "" {
		ex.ModelRef = &capture.ModelRef{Type: semconv.ModelRefTypeResponsesAPIModels, Name: h.cfg.modelServerName}
	}
	if bodyCut {
		// The client's body broke off (SPEC §0 D3): what arrived is no request the client sent
		// whole, even when it parses, so it is kept as request_raw only.
		ex.RequestRaw = capture.SharedRawText(body)
	} else {
		ex.Request, ex.RequestRaw = facts.RequestPayload(body) // body is never written again
	}

	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.ttftSet {
		ttft := capture.RoundMS(durationMS(cw.ttft - startMono))
		ex.LatencyTTFTMS = &ttft
	}
	var status *int
	if cw.wroteHeader && !cw.synthetic {
		s := cw.status
		status = &s
		ex.StatusCode = status
	}
	ex.CaptureBound = cw.budget.bound(cw.written)
	rawOnly := cw.keepsRawLocked(clean)
	// The captured body is never written again, so response_raw shares its memory.
	respBody := cw.raw
	if cw.encoded && !rawOnly {
		respBody = cw.decoded
	}
	terminal := stream.TerminalNone
	switch {
	case cw.synthetic:
		// The proxy's own 502/504: no upstream status, no response (SPEC §0 D5).
	case userPanic, rawOnly:
		// Exception path (SPEC §3.1 #11, #13, §4.7) or a body the capture cannot decode (SPEC §0
		// D4, capture_parse_error below): response null, the bytes seen as response_raw.
		if len(respBody) > 0 {
			ex.ResponseRaw = capture.SharedRawText(respBody)
		}
	case cw.sc != nil:
		terminal = cw.sc.Close(clean)
		if obj, f, ok := cw.sc.ResponseWithFacts(); ok {
			ex.Response = obj
			facts.SetStreamResponse(obj, capture.ResponseFacts(f))
		}
		cw.sc.Release() // the accumulated texts are garbage from here on
		if len(respBody) > 0 {
			ex.ResponseRaw = capture.SharedRawText(respBody)
		}
	case !clean:
		// The body broke off (the upstream's connection, SPEC §0 D5, or the client's, D3): what
		// arrived is no response the upstream sent whole, even when it parses, so it is kept as
		// response_raw only, as the reference's exception path keeps it (§4.7).
		if len(respBody) > 0 {
			ex.ResponseRaw = capture.SharedRawText(respBody)
		}
	default:
		ex.Response, ex.ResponseRaw = facts.ResponsePayload(respBody)
	}
	ex.ErrorCategory = capture.Category(capture.CategoryInput{
		Status:       status,
		Terminal:     terminal.String(),
		SSE:          cw.sse && !cw.synthetic && !rawOnly,
		BodyNonEmpty: len(respBody) > 0,
		ResponseNull: ex.Response == nil,
		Transport:    transport,
		Bounded:      ex.CaptureBound != nil,
	})
	return ex
}

// markIncompleteIfLossy marks the rollout incomplete when the record could not hold the whole
// response: a capture bound of SPEC §0 D15 (bound, logged with its kind, limit and seen), or an SSE
// event over D2's parse bound. A body that cannot be decoded (D4) is
// kept raw, so it is only logged. It runs before the held bytes are released.
func (h *Handler) markIncompleteIfLossy(cw *captureWriter, bound *capture.CaptureBound, rolloutID, id string, clean bool) {
	cw.mu.Lock()
	var reason, rawWhy string
	switch {
	case bound != nil && clean:
		reason = "the capture stopped at a capture bound (SPEC §0 D15); the response was forwarded whole"
	case bound != nil:
		// The call broke (the client left, the upstream failed): forwarded as far as it went.
		reason = "the capture stopped at a capture bound (SPEC §0 D15); the response was forwarded until the call broke (see the record's error_category)"
	case cw.keepsRawLocked(clean) && len(cw.raw) > 0:
		rawWhy = "unsupported Content-Encoding"
		if cw.decodeErr != nil {
			rawWhy = cw.decodeErr.Error()
		}
	case cw.sc != nil && cw.sc.Stats().BoundHits > 0:
		reason = fmt.Sprintf("%d SSE event(s) exceeded the per-event parse bound of %d bytes (SPEC §0 D2, WithMaxEventBytes, --max-event-bytes) and are not in the record's response",
			cw.sc.Stats().BoundHits, cw.maxEv)
	}
	cw.mu.Unlock()
	if rawWhy != "" {
		h.cfg.logger.Warn("gymtrace capture: response body could not be decoded; recorded as received (response_raw)", "rollout_id", rolloutID, "model_call_id", id, "reason", rawWhy)
	}
	if reason == "" {
		return
	}
	var boundAttrs []any
	if bound != nil {
		boundAttrs = []any{"capture_bound", bound.Kind, "limit", bound.Limit, "seen", bound.Seen}
	}
	h.markIncomplete(slog.LevelWarn, "record is partial; marking the rollout incomplete", rolloutID, id, append([]any{"reason", reason}, boundAttrs...)...)
}

func durationMS(d time.Duration) float64 { return float64(d) / 1e6 }

// runHandler calls serve and recovers a panic, returning its value and stack (for the log).
func runHandler(serve http.HandlerFunc, w http.ResponseWriter, r *http.Request) (pv any, stack []byte, panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			pv, panicked = v, true
			if v != http.ErrAbortHandler {
				stack = debug.Stack()
			}
		}
	}()
	serve(w, r)
	return nil, nil, false
}

// panicTransport classifies a panic of the model server handler the way SPEC §3.3 classifies an
// exception: a timeout error → "timeout", a connection error → "connection", else "exception".
func panicTransport(v any) string {
	err, ok := v.(error)
	if !ok || err == http.ErrAbortHandler {
		return transportException
	}
	if isTimeout(err) {
		return transportTimeout
	}
	var op *net.OpError
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) || errors.As(err, &op) {
		return transportConnection
	}
	return transportException
}

// errReader returns err on every read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// warnRefusedID logs a call answered with D12's 400 (SPEC §0 D12), naming the path as sent.
func (h *Handler) warnRefusedID(r *http.Request, err error) {
	h.cfg.logger.Warn("gymtrace capture: invalid rollout id: call answered 400, neither forwarded nor captured", "path", r.URL.EscapedPath(), "error", err)
}
