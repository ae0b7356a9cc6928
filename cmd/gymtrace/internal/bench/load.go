package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gymtrace/gymtrace/rollout"
)

// callTimeout bounds one call of the load generator.
const callTimeout = 60 * time.Second

// loadResult is what the load generator measured against one target.
type loadResult struct {
	ok        int             // measured calls answered 200 with the whole body
	failed    int             // measured calls that failed (transport error, status, short body)
	answered  int             // calls (warm-up included) whose response was read to its end, any status
	elapsed   time.Duration   // from the start of the measured phase to the last measured completion
	rate      float64         // Σ over workers of ok calls / (worker's last completion − start), calls/s
	latencies []time.Duration // of the ok calls, request start to end of body, sorted
	ttfbs     []time.Duration // of the ok calls, request start to first body byte, sorted
	firstErr  error           // the first failure, if any
}

// callResult is one call.
type callResult struct {
	latency, ttfb time.Duration
	answered      bool  // the response was read to its end (any status)
	err           error // nil: 200 and the whole body
}

// loadGen sends one workload's calls to one target from conc workers.
type loadGen struct {
	client *http.Client
	base   string // target base URL, http://HOST:PORT
	wl     *Workload
	want   []byte // the answer body every call must return, byte for byte ([Workload.Body])
	conc   int
}

// newLoadGen returns a load generator with its own transport: keep-alive, at most conc idle
// connections to the target, no compression, HTTP/1.1.
func newLoadGen(base string, wl *Workload, conc int) *loadGen {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         d.DialContext,
		MaxIdleConns:        conc,
		MaxIdleConnsPerHost: conc,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &loadGen{client: &http.Client{Transport: tr, Timeout: callTimeout}, base: base, wl: wl, want: wl.Body(), conc: conc}
}

// close closes the generator's idle connections.
func (g *loadGen) close() { g.client.CloseIdleConnections() }

// url is the URL of worker i's call number seq (0-based, warm-up included): its own rollout
// bench-<i>; for a token workload rollout bench-<i>-<seq/tokenCallsPerRollout> under the token
// prefix (/ng-rollout/<id>/training-token-capture/v1/...).
func (g *loadGen) url(i, seq int) string {
	id := "bench-" + strconv.Itoa(i)
	if g.wl.TokenSource != "" {
		id += "-" + strconv.Itoa(seq/tokenCallsPerRollout)
	}
	return rollout.ApplyPrefix(g.base, id, g.wl.TokenSource != "") + "/v1/chat/completions"
}

// run makes, for a JSON workload, one unmeasured warm-up call per worker (all at once), then lets
// every worker call in a loop until budget has passed since the measured phase began; calls in
// flight at that point complete and count. mark (if not nil) is called when the measured phase
// begins. It stops early when ctx is done.
func (g *loadGen) run(ctx context.Context, budget time.Duration, mark func()) loadResult {
	type worker struct {
		lat, ttfb  []time.Duration
		ok, failed int
		answered   int
		lastEnd    time.Time
		firstErr   error
	}
	ws := make([]worker, g.conc)
	bufs := make([][]byte, g.conc)
	for i := range bufs {
		bufs[i] = make([]byte, 32<<10)
	}
	var wg sync.WaitGroup
	if !g.wl.Stream() {
		for i := range g.conc {
			wg.Go(func() {
				if r := g.call(ctx, g.url(i, 0), bufs[i]); r.answered {
					ws[i].answered++
				}
			})
		}
		wg.Wait()
	}
	if mark != nil {
		mark()
	}
	start := time.Now()
	deadline := start.Add(budget)
	for i := range g.conc {
		wg.Go(func() {
			w := &ws[i]
			seq := 0
			if !g.wl.Stream() {
				seq = 1 // after the warm-up call
			}
			for ; ctx.Err() == nil && time.Now().Before(deadline); seq++ {
				r := g.call(ctx, g.url(i, seq), bufs[i])
				w.lastEnd = time.Now()
				if r.answered {
					w.answered++
				}
				if r.err != nil {
					w.failed++
					if w.firstErr == nil {
						w.firstErr = r.err
					}
					continue
				}
				w.ok++
				w.lat = append(w.lat, r.latency)
				w.ttfb = append(w.ttfb, r.ttfb)
			}
		})
	}
	wg.Wait()
	var res loadResult
	var last time.Time
	for i := range ws {
		w := &ws[i]
		res.ok += w.ok
		res.failed += w.failed
		res.answered += w.answered
		res.latencies = append(res.latencies, w.lat...)
		res.ttfbs = append(res.ttfbs, w.ttfb...)
		if w.lastEnd.After(last) {
			last = w.lastEnd
		}
		if d := w.lastEnd.Sub(start); w.ok > 0 && d > 0 {
			res.rate += float64(w.ok) / d.Seconds()
		}
		if res.firstErr == nil && w.firstErr != nil {
			res.firstErr = fmt.Errorf("worker %d: %w", i, w.firstErr)
		}
	}
	if !last.IsZero() {
		res.elapsed = last.Sub(start)
	}
	slices.Sort(res.latencies)
	slices.Sort(res.ttfbs)
	return res
}

// errBodyDiffers marks an answer whose body is not the workload's, byte for byte.
var errBodyDiffers = errors.New("answer body differs from the workload's")

// call makes one call to url and reads the answer to its end into buf (reused), timing the first
// body byte and the end; each read is compared with the workload's body at its offset, so a call
// succeeds only with those bytes exactly.
func (g *loadGen) call(ctx context.Context, url string, buf []byte) callResult {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(g.wl.Request))
	if err != nil {
		return callResult{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := g.client.Do(req)
	if err != nil {
		return callResult{err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	var r callResult
	n := 0
	differs := -1 // the offset of the first byte that is not the workload's
	for {
		m, rerr := resp.Body.Read(buf)
		if m > 0 {
			if n == 0 {
				r.ttfb = time.Since(start)
			}
			if differs < 0 {
				differs = firstDifference(buf[:m], g.want, n)
			}
			n += m
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			r.err = rerr
			return r
		}
	}
	r.latency = time.Since(start)
	r.answered = true
	switch {
	case resp.StatusCode != http.StatusOK:
		r.err = fmt.Errorf("status %d", resp.StatusCode)
	case differs >= 0 || n != len(g.want):
		if differs < 0 {
			differs = min(n, len(g.want))
		}
		r.err = fmt.Errorf("%w: %d bytes, want %d; first difference at byte %d", errBodyDiffers, n, len(g.want), differs)
	}
	return r
}

// firstDifference returns the offset of the first byte of got, read at offset at of the body, that
// is not want's byte there (a byte past want's end differs), or -1 when there is none.
func firstDifference(got, want []byte, at int) int {
	if at >= len(want) {
		return at
	}
	tail := want[at:]
	if len(got) <= len(tail) && bytes.Equal(got, tail[:len(got)]) {
		return -1
	}
	for i := range got {
		if i >= len(tail) || got[i] != tail[i] {
			return at + i
		}
	}
	return -1
}
