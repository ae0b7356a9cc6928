package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Flag name and default of the proxy's descriptor reserve (#14 finding 5).
const (
	fdReserveFlag    = "fd-reserve"
	defaultFDReserve = 32
	// fdsPerConn is what an accepted connection may still need beyond its own descriptor while a
	// call runs on it: the upstream connection, the capture file and the directory fsync of its
	// record (or marker).
	fdsPerConn = 3
)

// Back-off of a paused Accept.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// fdReserveListener accepts a connection only while the process keeps reserve descriptors free
// after every open connection got fdsPerConn more, so a call never reaches its durable path
// (SPEC §0 "Durability contract": a record or a marker) without the descriptors it needs. Below
// that it stops accepting — connections wait in the kernel's backlog — polls with a back-off of
// 5 ms to 1 s, and logs the pauses by episode (fdPauseLog: one line when a pause starts one, with
// the counts, one when descriptors have stayed free for fdPauseQuiet, with the pauses it held).
// Open descriptors are counted in /proc/self/fd (or /dev/fd); a count that fails, as it does with
// no descriptor left, counts as no room. Accept is called from one goroutine (http.Server); Close is safe concurrently.
type fdReserveListener struct {
	net.Listener
	reserve int
	limit   int // soft RLIMIT_NOFILE (Go raised it to the hard limit at start)
	fdDir   string

	pauses    *fdPauseLog  // logs the pauses (and holds the logger)
	conns     atomic.Int64 // accepted connections not yet closed
	closed    chan struct{}
	closeOnce sync.Once
	// Accept's goroutine only:
	counted struct { // the last count of open descriptors
		at          time.Time
		open, conns int
	}
}

// newFDReserveListener wraps ln. It fails when the descriptor limit leaves no room for one
// connection after the reserve, or when open descriptors cannot be counted.
func newFDReserveListener(ln net.Listener, reserve int, logger *slog.Logger) (*fdReserveListener, error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return nil, fmt.Errorf("reading RLIMIT_NOFILE: %w", err)
	}
	l := &fdReserveListener{Listener: ln, reserve: reserve, limit: int(min(rl.Cur, 1<<31)), pauses: newFDPauseLog(logger), closed: make(chan struct{})}
	for _, d := range []string{"/proc/self/fd", "/dev/fd"} {
		if _, err := os.Stat(d); err == nil {
			l.fdDir = d
			break
		}
	}
	if l.fdDir == "" {
		return nil, fmt.Errorf("--%s: cannot count open descriptors (no /proc/self/fd or /dev/fd)", fdReserveFlag)
	}
	open, err := l.openFDs()
	if err != nil {
		return nil, fmt.Errorf("--%s: counting open descriptors: %w", fdReserveFlag, err)
	}
	if need := open + reserve + 1 + fdsPerConn; need > l.limit {
		return nil, fmt.Errorf("--%s %d: the descriptor limit (RLIMIT_NOFILE) %d leaves no room for one connection (%d open, %d per connection; raise ulimit -n or lower --%s)",
			fdReserveFlag, reserve, l.limit, open, 1+fdsPerConn, fdReserveFlag)
	}
	return l, nil
}

// openFDs counts the process's open descriptors (the directory's own is not counted).
func (l *fdReserveListener) openFDs() (int, error) {
	f, err := os.Open(l.fdDir)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	return len(names) - 1, err
}

// recountAfter is how long a count of open descriptors is reused while far from the reserve.
const recountAfter = time.Second

// free returns the descriptors left after the open ones and fdsPerConn for every connection. The
// last count is reused for up to recountAfter, each connection accepted since charged its own
// descriptor too, while that estimate leaves four times the room of a connection and the reserve;
// nearer, every Accept counts (a count costs about 0.3 ms at 1,000 open descriptors).
func (l *fdReserveListener) free() int {
	conns := int(l.conns.Load())
	if !l.counted.at.IsZero() && time.Since(l.counted.at) < recountAfter {
		est := l.limit - l.counted.open - (conns - l.counted.conns) - fdsPerConn*conns
		if est >= 4*(l.reserve+1+fdsPerConn) {
			return est
		}
	}
	open, err := l.openFDs()
	if err != nil {
		l.counted.at = time.Time{}
		return 0
	}
	l.counted.at, l.counted.open, l.counted.conns = time.Now(), open, conns
	return l.limit - open - fdsPerConn*conns
}

// Accept waits until one more connection leaves the reserve free, then accepts it.
func (l *fdReserveListener) Accept() (net.Conn, error) {
	wait := acceptBackoffMin
	for paused := false; ; paused = true {
		free := l.free()
		if free-1-fdsPerConn >= l.reserve {
			break
		}
		if !paused {
			l.pauses.pause("free_descriptors", free, "reserve", l.reserve, "limit", l.limit, "open_connections", l.conns.Load())
		}
		select {
		case <-l.closed:
			return nil, net.ErrClosed
		case <-time.After(wait):
		}
		wait = min(2*wait, acceptBackoffMax)
	}
	l.pauses.resume()
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.conns.Add(1)
	return &countedConn{Conn: c, l: l}, nil
}

// Close stops a paused Accept, ends a resumed pause episode (fdPauseLog.close) and closes the
// listener.
func (l *fdReserveListener) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		l.pauses.close()
	})
	return l.Listener.Close()
}

// countedConn is an accepted connection; its Close gives its share of descriptors back.
type countedConn struct {
	net.Conn
	l    *fdReserveListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.conns.Add(-1) })
	return c.Conn.Close()
}
