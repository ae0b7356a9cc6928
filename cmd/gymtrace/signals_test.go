package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gymtrace/gymtrace/internal/testkit/syncbuf"
)

func TestShutdownSignals(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	start := time.Unix(1_760_000_000, 0)
	tests := []struct {
		name      string
		at        []time.Duration // arrival of each signal after the first
		wantAbort bool
	}{
		{name: "one signal drains", at: []time.Duration{0}},
		{name: "same signal twice at once (timeout, process group)", at: []time.Duration{0, 0}},
		{name: "repeats within 1s ignored", at: []time.Duration{0, 0, 500 * time.Millisecond, 999 * time.Millisecond}},
		{name: "second signal after 1s aborts", at: []time.Duration{0, time.Second}, wantAbort: true},
		{name: "later signal after ignored repeats aborts", at: []time.Duration{0, 0, 300 * time.Millisecond, 1500 * time.Millisecond}, wantAbort: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The watcher reads the clock once per signal, after taking it from ch, so the i-th
			// reading is the i-th arrival time: no race between the sender and the clock.
			var readings atomic.Int64
			now := func() time.Time {
				i := int(readings.Add(1)) - 1
				return start.Add(tt.at[min(i, len(tt.at)-1)])
			}
			ch := make(chan os.Signal) // unbuffered: a send returns once the watcher took the signal
			var logs bytes.Buffer
			w := newShutdownSignals(t.Context(), ch, now, slog.New(slog.NewTextHandler(&logs, nil)))
			require.NoError(t, w.ctx.Err(), "not cancelled before a signal")
			for range tt.at {
				select {
				case ch <- syscall.SIGTERM:
				case <-time.After(5 * time.Second):
					t.Fatal("the watcher stopped taking signals early")
				}
			}
			if tt.wantAbort {
				select {
				case <-w.abort:
				case <-time.After(5 * time.Second):
					t.Fatal("abort not closed")
				}
			}
			w.stop() // waits for the watcher: every signal sent has been handled
			require.ErrorIs(t, w.ctx.Err(), context.Canceled)
			select {
			case <-w.abort:
				assert.True(t, tt.wantAbort, "aborted by a repeat within 1s")
			default:
				assert.False(t, tt.wantAbort, "not aborted")
			}
			ignored := len(tt.at) - 1
			if tt.wantAbort {
				ignored--
			}
			assert.Equal(t, ignored, strings.Count(logs.String(), "ignoring a repeated signal within 1s of the first"), logs.String())
		})
	}
	t.Run("stop without a signal", func(t *testing.T) {
		w := newShutdownSignals(t.Context(), make(chan os.Signal), time.Now, slog.New(slog.DiscardHandler))
		w.stop()
		select {
		case <-w.abort:
			t.Fatal("aborted")
		default:
		}
	})
}

// groupProxy is a `gymtrace proxy` started in its own process group, so a test can signal the
// process and its group as timeout(1) does.
type groupProxy struct {
	url    string
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	exited chan struct{}
	err    error // Wait's result, after exited is closed
}

func startGroupProxy(t *testing.T, bin, upstream, dir string) *groupProxy {
	t.Helper()
	cmd := exec.Command(bin, "proxy", "--upstream", upstream, "--capture-dir", dir, "--listen", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &groupProxy{cmd: cmd, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, _ := bufio.NewReader(out).ReadString('\n')
	go func() {
		_, _ = io.Copy(io.Discard, out)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})
	require.True(t, strings.HasPrefix(line, "listening on http://127.0.0.1:"), "ready line %q; stderr: %s", line, p.stderr)
	p.url = strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	return p
}

// exitCode waits (bounded) for the proxy to exit and returns its exit code.
func (p *groupProxy) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("proxy did not exit; stderr: %s", p.stderr)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, p.err)
	return 0
}

// TestProxyCmdSignals: under timeout(1) the proxy gets SIGTERM twice at once (process and process
// group); such repeats within 1s must not abort the in-flight call. A deliberate second signal later
// aborts it and the proxy exits 1.
func TestProxyCmdSignals(t *testing.T) {
	bin := buildGymtrace(t)
	tests := []struct {
		name      string
		signal    func(pid int) error
		wantAbort bool
	}{
		{name: "repeats within 1s are ignored", signal: func(pid int) error {
			err := errors.Join(syscall.Kill(pid, syscall.SIGTERM), syscall.Kill(-pid, syscall.SIGTERM))
			time.Sleep(200 * time.Millisecond) // the pre-fix proxy aborted on this one for sure
			return errors.Join(err, syscall.Kill(pid, syscall.SIGTERM))
		}},
		{name: "a second signal after 1s aborts and exits 1", wantAbort: true, signal: func(pid int) error {
			err := syscall.Kill(pid, syscall.SIGTERM)
			time.Sleep(1300 * time.Millisecond)
			return errors.Join(err, syscall.Kill(pid, syscall.SIGINT))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			started := make(chan struct{})
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
				w.(http.Flusher).Flush()
				close(started)
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
				_, _ = io.WriteString(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			}))
			defer up.Close()
			p := startGroupProxy(t, bin, up.URL, t.TempDir())
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			done := postStreamAsync(client, p.url+"/ng-rollout/sig/v1/chat/completions")
			<-started
			require.NoError(t, tt.signal(p.cmd.Process.Pid))
			if tt.wantAbort {
				assert.Equal(t, 1, p.exitCode(t), "stderr: %s", p.stderr)
				r := <-done
				assert.False(t, r.err == nil && bytes.HasSuffix(r.body, []byte("data: [DONE]\n\n")), "the in-flight call was aborted")
				close(release)
				assert.Contains(t, p.stderr.String(), "second signal; aborting in-flight calls")
				assert.Contains(t, p.stderr.String(), "in-flight calls aborted by a second signal")
				return
			}
			time.Sleep(100 * time.Millisecond)
			close(release)
			r := <-done
			require.NoError(t, r.err)
			assert.True(t, bytes.HasSuffix(r.body, []byte("data: [DONE]\n\n")), "the in-flight call finished: %q", r.body)
			assert.Equal(t, 0, p.exitCode(t), "stderr: %s", p.stderr)
			assert.Contains(t, p.stderr.String(), "ignoring a repeated signal within 1s of the first")
			assert.NotContains(t, p.stderr.String(), "aborting")
		})
	}
}
