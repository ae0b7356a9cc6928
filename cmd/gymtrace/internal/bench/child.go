package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Child process timeouts.
const (
	childReadyTimeout = 30 * time.Second // from start to the "listening on" line
	childStopTimeout  = 30 * time.Second // from SIGTERM to exit, before SIGKILL
)

// readyPrefix starts the line a proxy prints on stdout when it accepts connections.
const readyPrefix = "listening on "

// child is a proxy running as a child process.
type child struct {
	cmd        *exec.Cmd
	url        string // from the ready line
	stderr     *tailBuffer
	stdoutDone chan struct{} // closed when stdout reached EOF
	waitOnce   sync.Once
	waitErr    error
}

// startChild runs cmd, which must print readyPrefix + "http://HOST:PORT" as its first stdout line,
// and waits for that line. cmd's Stdout, Stderr and (when unset) SysProcAttr are set here; its Env
// defaults to the bench's environment without OTEL_* variables. On any failure the child is killed
// and reaped, and the error carries the end of its stderr.
func startChild(ctx context.Context, cmd *exec.Cmd) (*child, error) {
	if cmd.Env == nil {
		cmd.Env = childEnv(os.Environ())
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = childSysProcAttr()
	}
	c := &child{cmd: cmd, stderr: newTailBuffer(16 << 10), stdoutDone: make(chan struct{})}
	cmd.Stderr = c.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: start %s: %w", cmd.Path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start %s: %w", cmd.Path, err)
	}
	ready := make(chan string, 1)
	go func() {
		defer close(c.stdoutDone)
		br := bufio.NewReader(stdout)
		line, _ := br.ReadString('\n')
		ready <- line
		_, _ = io.Copy(io.Discard, br)
	}()
	fail := func(format string, args ...any) (*child, error) {
		_ = cmd.Process.Kill()
		_ = c.wait()
		return nil, fmt.Errorf("bench: %s: %s; stderr: %s", strings.Join(cmd.Args, " "), fmt.Sprintf(format, args...), c.stderr.String())
	}
	timer := time.NewTimer(childReadyTimeout)
	defer timer.Stop()
	select {
	case line := <-ready:
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), readyPrefix)
		if !ok || !strings.HasPrefix(rest, "http://") {
			return fail("ready line %q, want %q", line, readyPrefix+"http://HOST:PORT")
		}
		c.url = rest
		return c, nil
	case <-timer.C:
		return fail("no ready line within %v", childReadyTimeout)
	case <-ctx.Done():
		return fail("%v", ctx.Err())
	}
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// wait reaps the child once (after its stdout is drained) and returns Wait's error.
func (c *child) wait() error {
	c.waitOnce.Do(func() {
		<-c.stdoutDone
		c.waitErr = c.cmd.Wait()
	})
	return c.waitErr
}

// stop sends SIGTERM, waits up to childStopTimeout for the child to drain and exit, then kills it.
// It returns an error when the child did not exit 0 by itself.
func (c *child) stop() error {
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		_ = c.cmd.Process.Kill()
	}
	done := make(chan error, 1)
	go func() { done <- c.wait() }()
	timer := time.NewTimer(childStopTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("bench: %s: exit: %w; stderr: %s", c.cmd.Args[0], err, c.stderr.String())
		}
		return nil
	case <-timer.C:
		_ = c.cmd.Process.Kill()
		<-done
		return fmt.Errorf("bench: %s did not stop within %v of SIGTERM; killed; stderr: %s", c.cmd.Args[0], childStopTimeout, c.stderr.String())
	}
}

// childEnv is env without the OTEL_* variables, so that a capture proxy child exports nothing over
// OTLP whatever the bench's environment says.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "OTEL_") {
			out = append(out, kv)
		}
	}
	return out
}

// tailBuffer keeps the last max bytes written to it; safe for concurrent use.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	lost bool
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

// Write keeps the end of p; it never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.lost = true
	}
	return len(p), nil
}

// String returns what is kept, marked when the beginning was dropped.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if t.lost {
		s = "..." + s
	}
	if s == "" {
		return "(empty)"
	}
	return s
}
