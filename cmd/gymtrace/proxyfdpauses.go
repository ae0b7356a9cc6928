package main

import (
	"log/slog"
	"sync"
	"time"
)

// fdPauseQuiet is how long descriptors must stay free, with no new pause, before a pause episode
// of the descriptor reserve is over and its end is logged.
const fdPauseQuiet = time.Second

// fdPauseLog logs the pauses of an fdReserveListener by episode, not one by one: near the limit
// every few connections pause Accept again, and a line per pause and per resume flooded the log
// (1,164 lines in 4 s with 64 clients under ulimit -n 80). An episode starts with a pause when
// none is open, logged once with the counts its caller passes; later pauses are counted. It ends
// when descriptors have stayed free for fdPauseQuiet after a resume without a new pause, logged
// once with the pauses it held, the time Accept spent paused and the episode's length (first
// pause to last resume). Closing the listener ends a resumed episode at once (logged the same way);
// an episode still paused at close is not logged again. Safe for concurrent use (the end runs on
// a timer's goroutine).
type fdPauseLog struct {
	logger *slog.Logger
	// now and afterFunc are the clock (time.Now, time.AfterFunc); tests replace them. afterFunc
	// returns the timer's Stop.
	now       func() time.Time
	afterFunc func(d time.Duration, f func()) (stop func() bool)

	mu         sync.Mutex
	start      time.Time     // the episode's first pause; zero: no episode open
	pausedAt   time.Time     // the current pause's start; zero while accepting
	lastResume time.Time     // the episode's last resume
	pauses     int           // pauses in the episode
	paused     time.Duration // time paused in the episode, the current pause excluded
	stopEnd    func() bool   // stops the pending end of the episode; nil when none is pending
	gen        uint64        // counts pauses, so an end timer that fires after a new pause does nothing
}

func newFDPauseLog(logger *slog.Logger) *fdPauseLog {
	return &fdPauseLog{logger: logger, now: time.Now,
		afterFunc: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
}

// pause records that Accept stopped accepting; attrs (slog key-value pairs) are logged when the
// pause opens an episode. A pause while paused is ignored.
func (p *fdPauseLog) pause(attrs ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.pausedAt.IsZero() {
		return
	}
	p.gen++
	if p.stopEnd != nil {
		p.stopEnd()
		p.stopEnd = nil
	}
	p.pausedAt = p.now()
	p.pauses++
	if p.start.IsZero() {
		p.start = p.pausedAt
		p.logger.Warn("gymtrace proxy: file descriptors low; not accepting connections until the reserve of the durable path is free again (further pauses are counted until descriptors stay free for "+fdPauseQuiet.String()+")", attrs...)
	}
}

// resume records that Accept accepts again and schedules the episode's end after fdPauseQuiet.
// It does nothing while not paused.
func (p *fdPauseLog) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pausedAt.IsZero() {
		return
	}
	p.lastResume = p.now()
	p.paused += p.lastResume.Sub(p.pausedAt)
	p.pausedAt = time.Time{}
	gen := p.gen
	p.stopEnd = p.afterFunc(fdPauseQuiet, func() { p.end(gen) })
}

// end logs the episode's end unless a pause came after the resume that scheduled it (gen).
func (p *fdPauseLog) end(gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gen != p.gen || p.start.IsZero() || !p.pausedAt.IsZero() {
		return
	}
	p.logEnd()
}

// close ends a resumed episode now (the listener is closing); see fdPauseLog.
func (p *fdPauseLog) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopEnd != nil {
		p.stopEnd()
		p.stopEnd = nil
	}
	p.gen++ // an end timer already firing does nothing
	if !p.start.IsZero() && p.pausedAt.IsZero() {
		p.logEnd()
	}
}

// logEnd logs the open episode's end and closes it; p.mu is held.
func (p *fdPauseLog) logEnd() {
	p.logger.Info("gymtrace proxy: file descriptors free again; accepting connections",
		"pauses", p.pauses, "paused", p.paused.Round(time.Millisecond), "episode", p.lastResume.Sub(p.start).Round(time.Millisecond))
	p.start, p.lastResume, p.pauses, p.paused, p.stopEnd = time.Time{}, time.Time{}, 0, 0, nil
}
