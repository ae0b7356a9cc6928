package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/ojson"
)

// Soak test settings (issue 7 part 5). The 60 s soak is GYMTRACE_SOAK_DURATION=60s; CI runs
// the short default.
const (
	soakDurationEnv     = "GYMTRACE_SOAK_DURATION"
	soakDefaultDuration = 20 * time.Second
	soakConcurrency     = 256
	soakRollouts        = 16
	soakRSSSlack        = 32 << 20 // bytes the RSS may grow after warm-up
)

// soakOutcome is how one call ended for its client.
type soakOutcome uint8

const (
	soakCompleted    soakOutcome = iota + 1 // the whole body was read
	soakDisconnected                        // the client left mid-stream on purpose
)

// soakStats collects the outcome of every call by model_call_id.
type soakStats struct {
	mu       sync.Mutex
	outcomes map[string]soakOutcome
	rollouts map[string]int // rollout id -> calls
	errs     []string       // unexpected client-side failures
}

func (s *soakStats) add(id, rollout string, o soakOutcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes[id] = o
	s.rollouts[rollout]++
}

func (s *soakStats) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) < 20 {
		s.errs = append(s.errs, fmt.Sprintf(format, args...))
	}
}

// soakDuration reads GYMTRACE_SOAK_DURATION (a Go duration), default 20s.
func soakDuration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv(soakDurationEnv)
	if v == "" {
		return soakDefaultDuration
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "%s=%q must be a Go duration such as 60s", soakDurationEnv, v)
	require.Positive(t, d, "%s must be positive", soakDurationEnv)
	return d
}

// procStatusBytes returns a "<key>: N kB" field of /proc/self/status, in bytes.
func procStatusBytes(t *testing.T, key string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return n << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", key)
	return 0
}

// settledMemory returns, after a full GC that returns freed memory to the OS, the process's VmRSS
// and the memory the Go runtime holds from the OS (mapped and not released), both in bytes.
func settledMemory(t *testing.T) (rss, goHeld int64) {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return procStatusBytes(t, "VmRSS"), int64(ms.Sys - ms.HeapReleased)
}

// raceDetector reports whether the test binary was built with -race. The race detector's own
// shadow memory and synchronization metadata live outside the Go heap, grow with every goroutine and
// object it has seen and are never returned, so VmRSS says nothing about gymtrace's memory there.
func raceDetector() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// openFDs counts /proc/self/fd.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

// TestProxySoak runs 256 concurrent clients against the proxy for GYMTRACE_SOAK_DURATION (default
// 20s; the 60 s soak is GYMTRACE_SOAK_DURATION=60s) with mixed dialects, streamed and
// unstreamed calls and random mid-stream disconnects. It checks that every call left exactly one
// intact record (completed calls complete, disconnected calls cancelled or complete when the stream
// had already ended), and that no goroutine, file descriptor or memory leaks: at the end the open
// descriptors are back to the count before the load, and VmRSS is at most 32 MiB over its value
// after the warm-up (in a -race build, where VmRSS holds the race detector's ever-growing shadow
// memory, the same bound applies to the memory the Go runtime holds: MemStats.Sys-HeapReleased).
func TestProxySoak(t *testing.T) {
	total := soakDuration(t)
	warmup := max(total/10, time.Second)
	leaks := goleak.IgnoreCurrent()

	store := newTestStore(t)
	fm := fakemodel.New(fakemodel.WithChunkDelay(2 * time.Millisecond))
	up := httptest.NewServer(fm)
	h, err := New(up.URL, WithStore(store), WithLogger(newTextLogger(io.Discard)), WithModelServerName("policy_model"))
	require.NoError(t, err)
	proxy := httptest.NewServer(h)
	client := &http.Client{Transport: &http.Transport{
		DisableCompression:  true,
		MaxIdleConns:        soakConcurrency,
		MaxIdleConnsPerHost: soakConcurrency,
	}}
	closeIdle := func() {
		client.CloseIdleConnections()
		h.fwd.transport.(*http.Transport).CloseIdleConnections()
	}
	teardown := sync.OnceFunc(func() {
		closeIdle()
		proxy.Close()
		require.NoError(t, h.Shutdown(context.Background()))
		up.Close()
	})
	t.Cleanup(teardown)

	// fdsBack waits until the open descriptors are back to want (connections close asynchronously).
	fdsBack := func(phase string, want int) {
		closeIdle()
		deadline := time.Now().Add(20 * time.Second)
		for {
			n := openFDs(t)
			if n <= want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d open file descriptors, want at most %d (leak)", phase, n, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	fdsIdle := openFDs(t)

	stats := &soakStats{outcomes: map[string]soakOutcome{}, rollouts: map[string]int{}}
	run := func(d time.Duration, seed uint64) {
		deadline := time.Now().Add(d)
		var wg sync.WaitGroup
		for w := range soakConcurrency {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				for time.Now().Before(deadline) {
					soakCall(client, proxy.URL, rng, stats)
				}
			})
		}
		wg.Wait()
	}

	run(warmup, 1)
	fdsBack("after warm-up", fdsIdle)
	rssWarm, goWarm := settledMemory(t)

	run(total-warmup, 2)
	fdsBack("after the soak", fdsIdle)
	rssEnd, goEnd := settledMemory(t)
	t.Logf("soak: %d calls in %s at concurrency %d; VmRSS after warm-up %d MiB, at the end %d MiB; Go runtime memory %d MiB, %d MiB; %d fds idle",
		len(stats.outcomes), total, soakConcurrency, rssWarm>>20, rssEnd>>20, goWarm>>20, goEnd>>20, fdsIdle)
	if raceDetector() {
		// VmRSS includes the race detector's never-returned shadow memory: bound what Go holds.
		assert.LessOrEqual(t, goEnd, goWarm+soakRSSSlack, "Go runtime memory grew by %d MiB (race build: VmRSS not comparable)", (goEnd-goWarm)>>20)
	} else {
		assert.LessOrEqual(t, rssEnd, rssWarm+soakRSSSlack, "VmRSS grew by %d MiB", (rssEnd-rssWarm)>>20)
	}

	teardown()
	goleak.VerifyNone(t, leaks)

	require.Empty(t, stats.errs, "unexpected client failures")
	require.NotEmpty(t, stats.outcomes)
	byID := map[string]string{} // model_call_id -> error_category ("" = null)
	for rollout, calls := range stats.rollouts {
		lines, invalid, err := store.ReadAvailable(rollout)
		require.NoError(t, err)
		require.Zero(t, invalid, "%s: every line intact", rollout)
		require.Len(t, lines, calls, "%s: one record per call", rollout)
		for _, l := range lines {
			v, err := ojson.Parse(l.Line)
			require.NoError(t, err)
			id, _ := v.Get("model_call_id")
			idText, _ := id.AsString()
			cat, _ := v.Get("error_category")
			catText, _ := cat.AsString()
			byID[idText] = catText
		}
		inc, err := store.IsIncomplete(rollout)
		require.NoError(t, err)
		assert.False(t, inc, "%s: nothing lost", rollout)
	}
	require.Len(t, byID, len(stats.outcomes), "record count = calls")
	var completed, disconnected, cancelled int
	for id, o := range stats.outcomes {
		cat, ok := byID[id]
		require.True(t, ok, "call %s has a record", id)
		switch o {
		case soakCompleted:
			completed++
			require.Empty(t, cat, "completed call %s", id)
		case soakDisconnected:
			disconnected++
			if cat == "cancelled" {
				cancelled++
			} else {
				require.Empty(t, cat, "disconnected call %s: cancelled, or complete when the stream had already ended", id)
			}
		}
	}
	t.Logf("soak: %d completed, %d disconnected (%d recorded cancelled)", completed, disconnected, cancelled)
	assert.Positive(t, completed)
	assert.Positive(t, cancelled, "some disconnects happened mid-stream")
}

// soakCall makes one call with a random dialect, stream mode and rollout; about one streamed call in
// eight is abandoned after its first bytes.
func soakCall(client *http.Client, base string, rng *rand.Rand, stats *soakStats) {
	dc := dialectCases[rng.IntN(len(dialectCases))]
	stream := rng.IntN(2) == 0
	body := dc.request
	if !stream {
		body = dc.nonStreaming()
	}
	body = strings.Replace(body, "fault", "soak "+strconv.Itoa(rng.IntN(1000)), 1)
	rollout := fmt.Sprintf("soak-%d", rng.IntN(soakRollouts))
	disconnect := stream && rng.IntN(8) == 0

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/ng-rollout/"+rollout+dc.path, strings.NewReader(body))
	if err != nil {
		stats.fail("request: %v", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		stats.fail("%s %s: %v", rollout, dc.path, err)
		return
	}
	defer resp.Body.Close()
	id := resp.Header.Get(modelCallIDHeader)
	if resp.StatusCode != http.StatusOK || id == "" {
		stats.fail("%s %s: status %d, model call id %q", rollout, dc.path, resp.StatusCode, id)
		return
	}
	if disconnect {
		if _, err := io.ReadFull(resp.Body, make([]byte, 16)); err != nil {
			stats.fail("%s: first bytes: %v", id, err)
			return
		}
		cancel()
		stats.add(id, rollout, soakDisconnected)
		return
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, context.Canceled) {
		stats.fail("%s: body: %v", id, err)
		return
	}
	if stream && !bytes.Contains(b, []byte("data: ")) {
		stats.fail("%s: not a stream: %q", id, b)
		return
	}
	stats.add(id, rollout, soakCompleted)
}
