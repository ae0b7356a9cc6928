package proxy

import (
	"sync"
	"sync/atomic"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// Defaults of the capture bounds (SPEC §0 D15). Past a bound a call's capture stops collecting while
// forwarding goes on untouched; the record keeps the prefix and says which bound (capture_bound).
const (
	// DefaultMaxResponseBytes is the most response bytes one call captures, counted as received
	// (before decoding): 256 MiB ([WithMaxResponseBytes]).
	DefaultMaxResponseBytes = 256 << 20
	// DefaultMaxDecodedBytes is the most bytes one call's Content-Encoding body is decoded to for
	// capture: 256 MiB ([WithMaxDecodedBytes]).
	DefaultMaxDecodedBytes = 256 << 20
	// DefaultMaxDecodeRatio is the decoded/encoded size ratio at which decoding for capture stops
	// ([WithMaxDecodeRatio]).
	DefaultMaxDecodeRatio = 1000
	// DefaultMaxCaptureBytesInFlight bounds the bytes all calls in flight hold captured together
	// (received and decoded): 1 GiB ([WithMaxCaptureBytesInFlight]).
	DefaultMaxCaptureBytesInFlight = 1 << 30
)

// WithMaxResponseBytes bounds the response bytes one captured call collects, counted as received,
// before any decoding (default [DefaultMaxResponseBytes]; SPEC §0 D15 kind "response_bytes"). Past
// n the response is still forwarded whole, at the upstream's pace and unbuffered; the record holds
// the first n bytes (decoded as far as they decode), carries capture_bound and marks the rollout
// incomplete. Values below 1 keep the default.
func WithMaxResponseBytes(n int64) Option {
	return setUnless(n <= 0, n, func(c *config) *int64 { return &c.bounds.maxResponse })
}

// WithMaxDecodedBytes bounds the bytes a captured call's Content-Encoding body (gzip, deflate, br,
// zstd; SPEC §0 D4) is decoded to (default [DefaultMaxDecodedBytes]; D15 kind "decoded_bytes"): the
// record keeps the first n decoded bytes. Forwarding never waits for decoding past the bound.
// Values below 1 keep the default.
func WithMaxDecodedBytes(n int64) Option {
	return setUnless(n <= 0, n, func(c *config) *int64 { return &c.bounds.maxDecoded })
}

// WithMaxDecodeRatio stops decoding a captured call's Content-Encoding body as soon as its decoded
// size exceeds ratio times the encoded bytes read so far (default [DefaultMaxDecodeRatio]; D15 kind
// "decode_ratio", a decompression bomb): the record keeps the decoded bytes up to that size. Values
// below 1 keep the default.
func WithMaxDecodeRatio(ratio int64) Option {
	return setUnless(ratio <= 0, ratio, func(c *config) *int64 { return &c.bounds.ratio })
}

// WithMaxCaptureBytesInFlight bounds the bytes all captured calls in flight hold together, received
// and decoded (default [DefaultMaxCaptureBytesInFlight]; D15 kind "in_flight_budget"): a call that
// would pass it stops collecting like a call past its own bound (limit = n, seen = the call's
// bytes received); its forwarding never stops. A call's share is returned when its record was
// written. Values below 1 keep the default.
func WithMaxCaptureBytesInFlight(n int64) Option {
	return setUnless(n <= 0, n, func(c *config) *int64 { return &c.bounds.inFlight })
}

// captureBounds are the configured bounds of SPEC §0 D15.
type captureBounds struct {
	maxResponse, maxDecoded, ratio, inFlight int64
}

func defaultCaptureBounds() captureBounds {
	return captureBounds{
		maxResponse: DefaultMaxResponseBytes,
		maxDecoded:  DefaultMaxDecodedBytes,
		ratio:       DefaultMaxDecodeRatio,
		inFlight:    DefaultMaxCaptureBytesInFlight,
	}
}

// inFlightBudget counts the captured bytes of all calls in flight against one limit. Safe for
// concurrent use.
type inFlightBudget struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes; false (nothing reserved) when that would pass the limit.
func (b *inFlightBudget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// callBudget is one call's view of the bounds: its share of the in-flight budget and the first
// bound it reached. The decoder goroutine and the handler goroutine both use it; it is safe for
// concurrent use.
type callBudget struct {
	bounds *captureBounds
	global *inFlightBudget

	held atomic.Int64 // bytes reserved from global

	mu  sync.Mutex
	hit *capture.CaptureBound // the first bound reached; Seen is filled in when the call ends
}

func newCallBudget(bounds *captureBounds, global *inFlightBudget) *callBudget {
	return &callBudget{bounds: bounds, global: global}
}

// take reserves n captured bytes from the in-flight budget; when it cannot, the call reaches the
// in_flight_budget bound and take returns false.
func (c *callBudget) take(n int64) bool {
	if c.global.take(n) {
		c.held.Add(n)
		return true
	}
	c.reach(semconv.CaptureBoundKindInFlightBudget, c.global.limit)
	return false
}

// reach records that the call reached the bound kind of value limit, unless it reached one before.
func (c *callBudget) reach(kind string, limit int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hit == nil {
		c.hit = &capture.CaptureBound{Kind: kind, Limit: limit}
	}
}

// reached reports whether the call reached a bound: its capture collects nothing more.
func (c *callBudget) reached() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hit != nil
}

// stopsDecoding reports whether the call reached a bound that ends decoding for capture: any but
// response_bytes, which only stops collecting received bytes, so the prefix received up to it is
// still decoded as far as it goes (SPEC §0 D15: "decoded as far as decoding went").
func (c *callBudget) stopsDecoding() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hit != nil && c.hit.Kind != semconv.CaptureBoundKindResponseBytes
}

// bound returns the record's capture_bound, with seen as the bytes received; nil when no bound was
// reached.
func (c *callBudget) bound(seen int64) *capture.CaptureBound {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hit == nil {
		return nil
	}
	b := *c.hit
	b.Seen = seen
	return &b
}

// release returns the call's share of the in-flight budget (once its record was written).
func (c *callBudget) release() {
	c.global.used.Add(-c.held.Swap(0))
}
