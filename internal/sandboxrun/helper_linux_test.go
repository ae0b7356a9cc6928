//go:build linux

package sandboxrun

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// The tests run real processes without external tools: the test binary re-executes itself with
// helperEnv naming a helper mode, and TestMain runs that mode instead of the tests.

// helperEnv selects a helper mode in a re-executed test binary.
const helperEnv = "SANDBOXRUN_TEST_HELPER"

// helperValueEnv carries a value the echo mode writes to stderr.
const helperValueEnv = "SANDBOXRUN_TEST_VALUE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

// helperSpec is a Spec that runs the test binary in helper mode with args.
func helperSpec(t testing.TB, mode string, args ...string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("test binary: %v", err)
	}
	// atexit_sleep_ms=0: a -race binary otherwise sleeps 1 s before it exits.
	env := append(os.Environ(), helperEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	return Spec{Path: exe, Args: args, Env: env}
}

// helperCmd is an exec.Cmd for the test binary in helper mode (for tests that need a process
// outside Run).
func helperCmd(t testing.TB, mode string, args ...string) *exec.Cmd {
	s := helperSpec(t, mode, args...)
	c := exec.Command(s.Path, s.Args...)
	c.Env = s.Env
	return c
}

// spinSink keeps the spin helper's loop from being optimised away.
var spinSink uint64

// touchedMemory maps n bytes of anonymous memory and writes to every page, so all of it is
// resident. It bypasses the Go heap so that a -race binary does not also write race shadow memory
// for it (which makes a large make([]byte) take seconds). Unmap it with unix.Munmap.
func touchedMemory(n int) []byte {
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		panic(fmt.Sprintf("mmap %d bytes: %v", n, err))
	}
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1
	}
	return mem
}

// runHelper runs one helper mode and returns the exit status.
//
//	exit N            exit with status N
//	alloc MiB HOLDms  map MiB of anonymous memory, touch every page, hold it HOLDms, exit 0
//	spin MS           burn CPU until this process has used MS ms of CPU time, exit 0
//	sleep MS          sleep MS ms, exit 0
//	signal N          send itself signal N
//	spawn MS          start a grandchild that sleeps 60 s, print its pid, sleep MS ms, exit 0
//	echo              copy stdin to stdout, write $SANDBOXRUN_TEST_VALUE to stderr, exit 0
//	pwd               print the working directory
func runHelper(mode string, args []string) int {
	arg := func(i int) int {
		n, err := strconv.Atoi(args[i])
		if err != nil {
			panic(fmt.Sprintf("helper %s: argument %q: %v", mode, args[i], err))
		}
		return n
	}
	switch mode {
	case "exit":
		return arg(0)
	case "alloc":
		mem := touchedMemory(arg(0) << 20)
		time.Sleep(time.Duration(arg(1)) * time.Millisecond)
		if err := unix.Munmap(mem); err != nil {
			panic(err)
		}
		return 0
	case "spin":
		target := time.Duration(arg(0)) * time.Millisecond
		x := uint64(1)
		for {
			for range 1 << 18 {
				x = x*6364136223846793005 + 1442695040888963407
			}
			var ru syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
				panic(err)
			}
			if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= target {
				break
			}
		}
		spinSink = x // keeps the loop from being optimised away
		return 0
	case "sleep":
		time.Sleep(time.Duration(arg(0)) * time.Millisecond)
		return 0
	case "signal":
		if err := syscall.Kill(os.Getpid(), syscall.Signal(arg(0))); err != nil {
			panic(err)
		}
		time.Sleep(10 * time.Second)
		return 99
	case "spawn":
		c := exec.Command(os.Args[0], "60000")
		c.Env = append(os.Environ(), helperEnv+"=sleep")
		if err := c.Start(); err != nil {
			panic(err)
		}
		fmt.Printf("%d\n", c.Process.Pid)
		time.Sleep(time.Duration(arg(0)) * time.Millisecond)
		return 0
	case "echo":
		if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
			panic(err)
		}
		fmt.Fprint(os.Stderr, os.Getenv(helperValueEnv))
		return 0
	case "pwd":
		wd, err := os.Getwd()
		if err != nil {
			panic(err)
		}
		fmt.Print(wd)
		return 0
	}
	panic("unknown helper mode " + mode)
}
