//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: stdout goes to tty, what it shows is read from ptm.
func openPTY(t *testing.T) (ptm, tty *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	return ptm, tty
}

// runOnTTY runs gymtrace with stdout on a terminal and returns what the terminal showed.
func runOnTTY(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ptm, tty := openPTY(t)
	defer ptm.Close()
	shown := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		_, err := io.Copy(&b, ptm) // ends with EIO once the terminal side is closed
		if err != nil && !errors.Is(err, syscall.EIO) {
			b.WriteString("\nread error: " + err.Error())
		}
		shown <- b.String()
	}()
	root := newRootCmd()
	var errb bytes.Buffer
	root.SetOut(tty)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	require.NoError(t, tty.Close())
	out := <-shown
	return strings.ReplaceAll(out, "\r\n", "\n"), err
}

func TestCallsOnTerminal(t *testing.T) {
	dir := readFixtureDir(t)
	t.Run("table", func(t *testing.T) {
		out, err := runOnTTY(t, "calls", "--capture-dir", dir, "rollout-7")
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		require.GreaterOrEqual(t, len(lines), 3, out)
		assert.Regexp(t, `^IDX +MODEL +DIALECT +HTTP +IN +OUT +REASON +CACHED +LATENCY +TTFT +FINISH +ERROR$`, lines[0])
		assert.NotContains(t, out, "{", "no JSON on a terminal")
	})
	t.Run("json forced", func(t *testing.T) {
		out, err := runOnTTY(t, "calls", "--json", "--capture-dir", dir, "rollout-7")
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(out, `{"model_call_id":`), out)
	})
	t.Run("payloads are JSON", func(t *testing.T) {
		out, err := runOnTTY(t, "calls", "--payloads", "--capture-dir", dir, "rollout-7")
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(out, `{"model_call_id":`), out)
	})
}
