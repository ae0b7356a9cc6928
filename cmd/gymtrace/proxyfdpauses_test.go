package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakePauseClock drives an fdPauseLog: now is set by the test, timers fire only when fire is called.
type fakePauseClock struct {
	now    time.Time
	timers []*fakePauseTimer
}

type fakePauseTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (c *fakePauseClock) install(p *fdPauseLog) {
	p.now = func() time.Time { return c.now }
	p.afterFunc = func(d time.Duration, f func()) func() bool {
		tm := &fakePauseTimer{d: d, f: f}
		c.timers = append(c.timers, tm)
		return func() bool { was := !tm.stopped; tm.stopped = true; return was }
	}
}

// fire runs the last timer scheduled, as time.AfterFunc would once its delay passed; even a
// stopped one when late is set (a timer that fired while a pause was stopping it).
func (c *fakePauseClock) fire(t *testing.T, late bool) {
	t.Helper()
	require.NotEmpty(t, c.timers)
	tm := c.timers[len(c.timers)-1]
	assert.Equal(t, fdPauseQuiet, tm.d)
	if !tm.stopped || late {
		c.now = c.now.Add(tm.d)
		tm.f()
	}
}

// TestFDPauseLogEpisodes: the descriptor reserve's pauses are logged by episode — one line when
// one starts, one when descriptors stayed free for fdPauseQuiet, with the pauses, the time paused
// and the episode's length — however many pauses and resumes it holds (a line each flooded the
// log). Driven by a fake clock and hand-fired timers, so no assertion depends on real timing.
func TestFDPauseLogEpisodes(t *testing.T) {
	type step struct {
		op string        // "pause", "resume", "fire", "fire late" (a stopped timer that fired anyway), "close"
		d  time.Duration // the clock advances by d before the step
	}
	burst := func(n int) []step { // n pauses of 10 ms, 5 ms apart
		var s []step
		for range n {
			s = append(s, step{"pause", 5 * time.Millisecond}, step{"resume", 10 * time.Millisecond})
		}
		return s
	}
	tests := []struct {
		name  string
		steps []step
		want  []string // the log lines' messages and counts, in order
	}{
		{name: "a burst of pauses is one episode", steps: append(burst(500), step{"fire", 0}),
			want: []string{"level=WARN msg=\"gymtrace proxy: file descriptors low; not accepting connections until the reserve of the durable path is free again (further pauses are counted until descriptors stay free for 1s)\" free_descriptors=3",
				"level=INFO msg=\"gymtrace proxy: file descriptors free again; accepting connections\" pauses=500 paused=5s episode=7.495s"}},
		{name: "no end while pauses keep coming", steps: burst(3),
			want: []string{"file descriptors low"}},
		{name: "an end timer that fires after a new pause does nothing", steps: []step{
			{"pause", 0}, {"resume", time.Second}, {"pause", 500 * time.Millisecond}, {"fire late", 0}},
			want: []string{"file descriptors low"}},
		{name: "a second episode after the first ended", steps: append(append(burst(2), step{"fire", 0}), append(burst(1), step{"fire", 0})...),
			want: []string{"file descriptors low", "free again; accepting connections\" pauses=2 paused=20ms episode=25ms",
				"file descriptors low", "free again; accepting connections\" pauses=1 paused=10ms episode=10ms"}},
		{name: "close ends a resumed episode at once", steps: append(burst(4), step{"close", 0}),
			want: []string{"file descriptors low", "pauses=4 paused=40ms episode=55ms"}},
		{name: "close while paused logs no end", steps: []step{{"pause", 0}, {"resume", time.Millisecond}, {"pause", time.Millisecond}, {"close", time.Second}},
			want: []string{"file descriptors low"}},
		{name: "resume without a pause logs nothing", steps: []step{{"resume", 0}, {"close", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			p := newFDPauseLog(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				}})))
			clock := &fakePauseClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
			clock.install(p)
			for _, s := range tt.steps {
				clock.now = clock.now.Add(s.d)
				switch s.op {
				case "pause":
					p.pause("free_descriptors", 3)
				case "resume":
					p.resume()
				case "fire", "fire late":
					clock.fire(t, s.op == "fire late")
				case "close":
					p.close()
				}
			}
			var lines []string
			if s := strings.TrimSuffix(logs.String(), "\n"); s != "" {
				lines = strings.Split(s, "\n")
			}
			require.Len(t, lines, len(tt.want), logs.String())
			for i, w := range tt.want {
				assert.Contains(t, lines[i], w)
			}
		})
	}
}
