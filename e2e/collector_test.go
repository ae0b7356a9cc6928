package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	collectorBuildOnce sync.Once
	collectorBuildErr  error
)

// collectorBinary builds gymtrace-otelcol (../collectorext, a module of its own) once per run and
// returns its path.
func collectorBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "gymtrace-otelcol")
	collectorBuildOnce.Do(func() {
		out, err := exec.Command("go", "build", "-C", "../collectorext", "-o", bin, "./cmd/gymtrace-otelcol").CombinedOutput()
		if err != nil {
			collectorBuildErr = fmt.Errorf("go build collectorext/cmd/gymtrace-otelcol: %w\n%s", err, out)
		}
	})
	require.NoError(t, collectorBuildErr)
	return bin
}

// collectorConfig is a capture-only gymtrace-otelcol: OTLP/HTTP on 127.0.0.1:%d, gymcapture
// writing records and observations to %s, synchronously (no batch processor, no queue).
const collectorConfig = `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  gymcapture:
    capture_dir: %s
    observations: true
    sending_queue:
      enabled: false
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [gymcapture]
`

// startCollector runs gymtrace-otelcol writing captureDir and returns its OTLP/HTTP base URL once
// it accepts connections. At the end of the test it sends SIGTERM and requires a clean exit.
func startCollector(t *testing.T, captureDir string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	config := filepath.Join(t.TempDir(), "gymtrace-otelcol.yaml")
	require.NoError(t, os.WriteFile(config, fmt.Appendf(nil, collectorConfig, port, captureDir), 0o600))

	cmd := exec.Command(collectorBinary(t), "--config="+config)
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			if waitErr != nil {
				t.Errorf("gymtrace-otelcol did not exit cleanly after SIGTERM: %v\n%s", waitErr, stderr.String())
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("gymtrace-otelcol did not exit within 20s of SIGTERM\n%s", stderr.String())
		}
	})

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			require.NoError(t, c.Close())
			return "http://" + addr
		}
		select {
		case <-exited:
			t.Fatalf("gymtrace-otelcol exited before listening on %s: %v\n%s", addr, waitErr, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "gymtrace-otelcol not listening on %s after 60s\n%s", addr, stderr.String())
	}
}
