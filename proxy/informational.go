package proxy

import (
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
)

// informational returns the client trace that forwards each 1xx informational response the
// upstream sends before its final one (103 Early Hints, 100 Continue) to the client, status and
// headers (hop-by-hop ones removed), as net/http/httputil.ReverseProxy does: the proxy forwards
// the upstream's exchange unchanged, and a 1xx is no part of the capture (captureWriter passes it
// through unrecorded). The headers the handler set on w for its final response are kept aside
// while the 1xx is written and put back after. The hook runs on the transport's goroutine while
// the handler waits in RoundTrip, so w is not used by two goroutines at once.
func informational(w http.ResponseWriter) *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		Got1xxResponse: func(code int, header textproto.MIMEHeader) error {
			if code == http.StatusSwitchingProtocols {
				return nil // not informational: the final response of an upgrade
			}
			h := w.Header()
			final := maps.Clone(h)
			clear(h)
			for k, vv := range header {
				h[k] = append([]string(nil), vv...)
			}
			removeHopHeaders(h)
			w.WriteHeader(code)
			clear(h)
			maps.Copy(h, final)
			return nil
		},
	}
}
