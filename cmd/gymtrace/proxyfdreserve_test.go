package main

import (
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
)

// TestFDReserveListenerPauses: below the reserve Accept accepts nothing, logs the pause once, and
// returns net.ErrClosed as soon as the listener is closed (http.Server's shutdown), logging no end
// (it never resumed).
func TestFDReserveListenerPauses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var logs syncbuf.Buffer
	l, err := newFDReserveListener(ln, defaultFDReserve, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	open, err := l.openFDs()
	require.NoError(t, err)
	l.limit = open + defaultFDReserve + fdsPerConn // one descriptor short of room for a connection

	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	accepted := make(chan error, 1)
	go func() {
		conn, err := l.Accept()
		if conn != nil {
			conn.Close()
		}
		accepted <- err
	}()
	select {
	case err := <-accepted:
		t.Fatalf("Accept returned below the reserve: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "file descriptors low; not accepting connections"), "one line for the pause, not one per back-off: %s", logs.String())
	require.NoError(t, l.Close())
	select {
	case err := <-accepted:
		assert.True(t, errors.Is(err, net.ErrClosed), "%v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Accept did not return after Close")
	}
	assert.NotContains(t, logs.String(), "file descriptors free again")
}

// TestFDReserveListenerAccepts: with room, connections are accepted and counted until closed.
func TestFDReserveListenerAccepts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var logs syncbuf.Buffer
	l, err := newFDReserveListener(ln, defaultFDReserve, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	defer l.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	conn, err := l.Accept()
	require.NoError(t, err)
	assert.Equal(t, int64(1), l.conns.Load())
	require.NoError(t, conn.Close())
	require.Error(t, conn.Close(), "a second Close is the conn's own error")
	assert.Zero(t, l.conns.Load(), "counted once")
	assert.Empty(t, logs.String())
}
