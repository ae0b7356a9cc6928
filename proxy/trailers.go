package proxy

import (
	"maps"
	"net/http"
	"slices"
	"strings"
)

// announceTrailers declares in h the trailer keys the upstream announced (resp.Trailer before the
// body; removeHopHeaders dropped its Trailer header), which also makes net/http send the response
// chunked so the trailers can follow. It returns the keys, sorted.
func announceTrailers(h http.Header, declared http.Header) []string {
	if len(declared) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(declared))
	h.Set("Trailer", strings.Join(keys, ", "))
	return keys
}

// copyTrailers sets the upstream's trailers (resp.Trailer after EOF) on the client response header
// h, after the body: announced keys under their own name, others with http.TrailerPrefix, so
// net/http sends both as trailers of a chunked (or HTTP/2) response.
func copyTrailers(h http.Header, trailers http.Header, announced []string) {
	for k, vv := range trailers {
		if len(vv) == 0 {
			continue
		}
		key := k
		if !slices.Contains(announced, k) {
			key = http.TrailerPrefix + k
		}
		h[key] = append([]string(nil), vv...)
	}
}
