package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"time"
)

// readRequestBody reads the body of a captured request whole, once, within [WithMaxRequestBytes] and
// [WithRequestReadTimeout]. A body over the limit (413) or not received in time (408) is refused:
// answered, logged, refused true, and the caller forwards and records nothing. Any other read error
// (the client went away mid-body) is returned with the bytes read so far, as io.ReadAll would.
func (h *Handler) readRequestBody(w http.ResponseWriter, r *http.Request, rolloutID string) (body []byte, readErr error, refused bool) {
	limit := h.cfg.maxRequestBytes
	if r.ContentLength > limit {
		h.refuseBody(w, r, rolloutID, http.StatusRequestEntityTooLarge, fmt.Errorf("declared Content-Length %d is over the limit of %d bytes", r.ContentLength, limit))
		return nil, nil, true
	}
	if d := h.cfg.requestReadTimeout; d > 0 {
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err == nil {
			// Cleared after the body, so that the deadline never limits the response; a refusal
			// sets its own (writeRefusal).
			defer func() {
				if !refused {
					_ = rc.SetReadDeadline(time.Time{})
				}
			}()
		}
	}
	body, readErr = readLimited(r.Body, r.ContentLength, limit)
	switch {
	case errors.Is(readErr, errBodyTooLarge):
		h.refuseBody(w, r, rolloutID, http.StatusRequestEntityTooLarge, fmt.Errorf("body is over the limit of %d bytes", limit))
		return nil, nil, true
	case readErr != nil && isTimeout(readErr):
		h.refuseBody(w, r, rolloutID, http.StatusRequestTimeout, fmt.Errorf("body not received within %s (%d bytes read): %w", h.cfg.requestReadTimeout, len(body), readErr))
		return nil, nil, true
	}
	return body, readErr, false
}

// errBodyTooLarge reports a request body over the limit.
var errBodyTooLarge = errors.New("request body over the limit")

// readLimited reads r to EOF: a declared length (at most limit) into one buffer of exactly that size,
// else failing with errBodyTooLarge as soon as more than limit bytes arrived.
func readLimited(r io.Reader, declared, limit int64) ([]byte, error) {
	if declared == 0 {
		return nil, nil
	}
	if declared > 0 {
		buf := make([]byte, declared)
		n, err := io.ReadFull(r, buf)
		if err != nil {
			return buf[:n], err
		}
		// Read on to the body's EOF: only then does net/http watch for a client that goes away
		// (cancelling the request's context, SPEC §0 D3).
		var extra [1]byte
		switch m, err := io.ReadAtLeast(r, extra[:], 1); {
		case m > 0:
			return nil, errBodyTooLarge // more than declared (net/http never delivers that)
		case errors.Is(err, io.EOF):
			return buf, nil
		default:
			return buf, err
		}
	}
	// One byte over the limit proves the body too large.
	buf, err := io.ReadAll(io.LimitReader(r, min(limit, math.MaxInt64-1)+1))
	if int64(len(buf)) > limit {
		return nil, errBodyTooLarge
	}
	return buf, err
}

// isTimeout reports whether err is a deadline expiry (a context's, a connection's or any net.Error
// that says it timed out).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// refuseBody answers a refused request body (413 or 408) with a dialect-shaped JSON error and logs why.
func (h *Handler) refuseBody(w http.ResponseWriter, r *http.Request, rolloutID string, status int, why error) {
	code, typ := "request_too_large", "invalid_request_error"
	if status == http.StatusRequestTimeout {
		code, typ = "request_timeout", "timeout_error"
	}
	msg := fmt.Sprintf("%s: gymtrace capture: request refused: %v", code, why)
	h.cfg.logger.Warn("gymtrace capture: request body refused; nothing forwarded or recorded",
		"rollout_id", rolloutID, "path", r.URL.Path, "status", status, "reason", why.Error())
	// The unread rest of the body is not drained: the connection closes after the answer.
	writeRefusal(w, r, status, ErrorBody(r.URL.Path, typ, msg, code))
}
