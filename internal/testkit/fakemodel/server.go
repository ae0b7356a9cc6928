package fakemodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Server is the fake model server, an http.Handler. Make one with [New]; it is safe for
// concurrent use.
type Server struct {
	cfg   config
	calls atomic.Int64
}

var _ http.Handler = (*Server)(nil)

// New returns a Server configured by opts (see the With* functions). Nil options are ignored.
func New(opts ...Option) *Server {
	return &Server{cfg: newConfig(opts)}
}

// Calls returns the number of requests to the three model endpoints this Server has handled
// so far, whatever their outcome (answers, validation errors, faults).
func (s *Server) Calls() int64 { return s.calls.Load() }

// endpoints maps the model endpoints to their dialect (SPEC.md §1.6: exact path match).
var endpoints = map[string]Dialect{
	"/v1/responses":        DialectResponses,
	"/v1/chat/completions": DialectChat,
	"/v1/messages":         DialectMessages,
}

// ServeHTTP answers POST /v1/responses, POST /v1/chat/completions, POST /v1/messages and
// GET /v1/models; other paths get a 404, other methods a 405 and request bodies over 32 MiB a
// 413, in the provider's error shape.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.writeMethodNotAllowed(w, r, DialectChat, "GET, HEAD")
			return
		}
		s.writeModels(w, r)
		return
	}
	d, ok := endpoints[r.URL.Path]
	if !ok {
		writeError(w, DialectChat, newIDs([]byte(r.URL.Path)), &apiError{
			status: http.StatusNotFound, message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path),
		})
		return
	}
	s.calls.Add(1)
	if r.Method != http.MethodPost {
		s.writeMethodNotAllowed(w, r, d, http.MethodPost)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, d, newIDs(nil), &apiError{status: http.StatusRequestEntityTooLarge,
				message: fmt.Sprintf("Request body exceeds the maximum size of %d bytes.", tooBig.Limit)})
		}
		return // the client went away mid-body: nothing to answer
	}
	req, apiErr := parseRequest(d, body, s.cfg.alwaysReason)
	if apiErr != nil {
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
	if f.Status != 0 || f.Body != nil {
		writeFault(w, d, g, f)
		return
	}
	a := plan(req)
	created := s.cfg.now().Unix()
	var e encoder
	if !req.stream {
		var v any
		switch d {
		case DialectResponses:
			v = responseObject(req, a, g, created, true)
		case DialectChat:
			v = chatCompletion(req, a, g, created)
		default:
			v = anthropicMessage(req, a, g)
		}
		b := e.enc(v)
		if e.err != nil {
			writeError(w, d, g, &apiError{status: http.StatusInternalServerError, message: "fakemodel: " + e.err.Error()})
			return
		}
		writeJSONAnswer(w, d, g, b, f)
		return
	}
	var events []event
	switch d {
	case DialectResponses:
		events = responsesEvents(&e, req, a, g, created)
	case DialectChat:
		events = chatEvents(&e, req, a, g, created)
	default:
		events = messagesEvents(&e, req, a, g)
	}
	if e.err != nil {
		writeError(w, d, g, &apiError{status: http.StatusInternalServerError, message: "fakemodel: " + e.err.Error()})
		return
	}
	s.writeStream(w, r, d, g, events, f)
}

// setRequestID sets the provider's request id header.
func setRequestID(h http.Header, d Dialect, g ids) {
	if d == DialectMessages {
		h.Set("Request-Id", g.alnum("req_011C", "request-id", 20))
		return
	}
	h.Set("X-Request-Id", g.hex("req_", "request-id", 32))
	h.Set("Openai-Processing-Ms", "1")
}

// writeJSONAnswer sends a JSON answer, cut as f says (only CutAbort applies to JSON).
func writeJSONAnswer(w http.ResponseWriter, d Dialect, g ids, b []byte, f Fault) {
	h := w.Header()
	setRequestID(h, d, g)
	h.Set("Content-Type", "application/json")
	if f.Cut == CutAbort {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b[:len(b)/2])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // net/http closes the connection without ending the body
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// event is one server-sent event; name is "" for Chat's data-only events.
type event struct {
	name string
	data []byte
}

// writeStream sends events as text/event-stream, flushing each one, pausing cfg.chunkDelay
// between two events, and cut as f says.
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, d Dialect, g ids, events []event, f Fault) {
	h := w.Header()
	setRequestID(h, d, g)
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for i, ev := range events {
		if f.Cut != CutNone && i == f.CutAfter {
			cutStream(w, rc, d, f.Cut, i)
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
		buf = append(buf, "event: "...)
		buf = append(buf, ev.name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, ev.data...)
	buf = append(buf, "\n\n"...)
	_, err := w.Write(buf)
	return err
}

// cutStream ends a stream early; seq is the sequence number the next event would have had.
func cutStream(w http.ResponseWriter, rc *http.ResponseController, d Dialect, c Cut, seq int) {
	switch c {
	case CutAbort:
		panic(http.ErrAbortHandler) // net/http closes the connection without ending the body
	case CutErrorEvent:
		var ev event
		switch d {
		case DialectResponses:
			ev = event{"error", []byte(`{"type":"error","code":"server_error","message":"The server had an error processing your request. Sorry about that!","param":null,"sequence_number":` + strconv.Itoa(seq) + `}`)}
		case DialectChat:
			ev = event{"", []byte(`{"error":{"message":"The server had an error processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`)}
		default:
			ev = event{"error", []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}
		}
		_ = writeEvent(w, ev)
		_ = rc.Flush()
	}
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

// writeMethodNotAllowed answers 405 in the dialect's error shape.
func (s *Server) writeMethodNotAllowed(w http.ResponseWriter, r *http.Request, d Dialect, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, d, newIDs([]byte(r.URL.Path)), &apiError{
		status: http.StatusMethodNotAllowed, message: fmt.Sprintf("Method %s is not allowed for %s; use %s.", r.Method, r.URL.Path, allow),
	})
}
