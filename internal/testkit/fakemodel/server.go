package fakemodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Server is the fake model server, an http.Handler. Make one with [New]; it is safe for
// concurrent use.
type Server struct {
	cfg config
}

var _ http.Handler = (*Server)(nil)

// New returns a Server configured by opts (see the With* functions). Nil options are ignored.
func New(opts ...Option) *Server {
	s := &Server{cfg: config{engine: EngineOpenAI}}
	for _, o := range opts {
		if o != nil {
			o(&s.cfg)
		}
	}
	return s
}

// dialectAPI is how one dialect answers: its JSON answer, its event stream and its in-stream
// error event (seq is the sequence number the next event would have had).
type dialectAPI struct {
	dialect    Dialect
	answer     func(*request, answer, ids) obj
	events     func(*encoder, *request, answer, ids) []event
	errorEvent func(seq int) event
}

// endpoints maps the model endpoints to their dialect (SPEC.md §1.6: exact path match).
var endpoints = map[string]dialectAPI{
	"/v1/responses": {DialectResponses, responsesAnswer, responsesEvents, func(seq int) event {
		return event{"error", []byte(`{"type":"error","code":"server_error","message":"The server had an error processing your request. Sorry about that!","param":null,"sequence_number":` + strconv.Itoa(seq) + `}`)}
	}},
	"/v1/chat/completions": {DialectChat, chatCompletion, chatEvents, func(int) event {
		return event{"", []byte(`{"error":{"message":"The server had an error processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`)}
	}},
	"/v1/messages": {DialectMessages, anthropicMessage, messagesEvents, func(int) event {
		return event{"error", []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}
	}},
}

// ServeHTTP answers POST /v1/responses, POST /v1/chat/completions and POST /v1/messages, and
// with a vLLM or SGLang engine ([WithEngine]) its tokenize endpoint; other paths get a 404,
// other methods a 405 and request bodies over 32 MiB a 413, in the provider's error shape.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api, ok := endpoints[r.URL.Path]
	tokenize := s.tokenizePath(r.URL.Path)
	if tokenize {
		api = dialectAPI{dialect: DialectChat}
	}
	if !ok && !tokenize {
		writeError(w, DialectChat, newIDs([]byte(r.URL.Path)), &apiError{
			status: http.StatusNotFound, message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path),
		})
		return
	}
	d := api.dialect
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, d, newIDs([]byte(r.URL.Path)), &apiError{status: http.StatusMethodNotAllowed,
			message: fmt.Sprintf("Method %s is not allowed for %s; use POST.", r.Method, r.URL.Path)})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, d, newIDs(nil), &apiError{status: http.StatusRequestEntityTooLarge,
				message: fmt.Sprintf("Request body exceeds the maximum size of %d bytes.", tooBig.Limit)})
		}
		return // the client went away mid-body: nothing to answer
	}
	if tokenize {
		s.serveTokenize(w, body)
		return
	}
	req, apiErr := parseRequest(d, s.cfg.engine, body)
	var ea *engineAnswer
	switch {
	case apiErr == nil && req.engineResponses():
		ea, apiErr = planEngineResponses(req, &s.cfg)
	case apiErr == nil && s.engineCall(d):
		ea, apiErr = planEngine(req, &s.cfg)
	}
	switch {
	case apiErr != nil && s.engineCall(d):
		writeEngineError(w, s.cfg.engine, newIDs(body), apiErr)
		return
	case apiErr != nil:
		writeError(w, d, newIDs(body), apiErr)
		return
	}
	g := newIDs(req.seed())
	var f Fault
	if s.cfg.fault != nil {
		f = s.cfg.fault(Call{Dialect: d, Model: req.model, Stream: req.stream, Body: body, Header: r.Header})
	}
	for k, vs := range f.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if f.Delay > 0 && !sleep(r.Context(), f.Delay) {
		return
	}
	dialect := d
	if ea != nil {
		d, api.dialect = dialectEngine, dialectEngine // the engines' wire: no provider headers
	}
	switch {
	case ea != nil && f.Status != 0 && f.Body == nil:
		_, message, _ := defaultError(DialectChat, f.Status)
		writeEngineError(w, s.cfg.engine, g, &apiError{status: f.Status, message: message})
		return
	case f.Status != 0 || f.Body != nil:
		writeFault(w, d, g, f)
		return
	}
	var e encoder
	var b []byte
	var events []event
	switch {
	case ea != nil && req.stream:
		_, evs := engineAPI(s.cfg.engine, dialect)
		events = evs(&e, req, ea, g)
	case ea != nil:
		ans, _ := engineAPI(s.cfg.engine, dialect)
		b = e.enc(ans(req, ea, g))
	case req.stream:
		events = api.events(&e, req, plan(req), g)
	default:
		b = e.enc(api.answer(req, plan(req), g))
	}
	switch {
	case e.err != nil && ea != nil:
		writeEngineError(w, s.cfg.engine, g, &apiError{status: http.StatusInternalServerError, message: "fakemodel: " + e.err.Error()})
	case e.err != nil:
		writeError(w, d, g, &apiError{status: http.StatusInternalServerError, message: "fakemodel: " + e.err.Error()})
	case req.stream:
		s.writeStream(w, r, api, g, events, f)
	default:
		writeJSONAnswer(w, d, g, b, f)
	}
}

// setRequestID sets the provider's request id header (none for the vLLM and SGLang engines,
// which send none by default).
func setRequestID(h http.Header, d Dialect, g ids) {
	if d == dialectEngine {
		return
	}
	if d == DialectMessages {
		h.Set("Request-Id", g.alnum("req_011C", "request-id", 20))
		return
	}
	h.Set("X-Request-Id", g.hex("req_", "request-id", 32))
	h.Set("Openai-Processing-Ms", "1")
}

// writeJSONAnswer sends a JSON answer, cut as f says (only CutAbort applies to JSON).
func writeJSONAnswer(w http.ResponseWriter, d Dialect, g ids, b []byte, f Fault) {
	if f.Cut != CutAbort {
		writeBody(w, d, g, http.StatusOK, "application/json", b)
		return
	}
	setRequestID(w.Header(), d, g)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b[:len(b)/2])
	_ = http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler) // net/http closes the connection without ending the body
}

// event is one server-sent event; name is "" for Chat's data-only events.
type event struct {
	name string
	data []byte
}

// writeStream sends events as text/event-stream, flushing each one, pausing cfg.chunkDelay
// between two events, and cut as f says.
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, api dialectAPI, g ids, events []event, f Fault) {
	h := w.Header()
	setRequestID(h, api.dialect, g)
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	if api.dialect != dialectEngine {
		h.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for i, ev := range events {
		if f.Cut != CutNone && i == f.CutAfter {
			if f.Cut == CutAbort {
				panic(http.ErrAbortHandler) // net/http closes the connection without ending the body
			}
			if f.Cut == CutErrorEvent {
				_ = writeEvent(w, api.errorEvent(i))
				_ = rc.Flush()
			}
			return
		}
		if i > 0 && s.cfg.chunkDelay > 0 && !sleep(r.Context(), s.cfg.chunkDelay) {
			return
		}
		if writeEvent(w, ev) != nil || rc.Flush() != nil {
			return
		}
	}
}

// writeEvent writes one event with its "event:" line when named.
func writeEvent(w io.Writer, ev event) error {
	var buf []byte
	if ev.name != "" {
		buf = fmt.Appendf(buf, "event: %s\n", ev.name)
	}
	_, err := w.Write(fmt.Appendf(buf, "data: %s\n\n", ev.data))
	return err
}

// sleep waits d or until ctx ends; it reports whether the full d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
