package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// workloadCommand is the first argument that runs the binary in workload mode: the command the
// run_workload tool starts in its sandbox (`agent workload --memory-mib 64 --cpu-seconds 0.5`).
const workloadCommand = "workload"

// Bounds of a workload, so a model cannot ask the sandbox for anything unreasonable.
const (
	maxWorkloadMemoryMiB  = 1024
	maxWorkloadCPUSeconds = 30.0
)

// workload is what the run_workload tool runs: touch MemoryMiB mebibytes of memory (every page
// written, so it is resident), then burn CPU until the process itself has used CPUSeconds of CPU
// time.
type workload struct {
	MemoryMiB  int     // mebibytes (2^20 bytes) to allocate and touch, 0..maxWorkloadMemoryMiB
	CPUSeconds float64 // CPU seconds (user + system) to burn, 0..maxWorkloadCPUSeconds
}

// validate reports whether w is within the workload bounds, naming the value and the rule.
func (w workload) validate() error {
	if w.MemoryMiB < 0 || w.MemoryMiB > maxWorkloadMemoryMiB {
		return fmt.Errorf("memory %d MiB: must be between 0 and %d", w.MemoryMiB, maxWorkloadMemoryMiB)
	}
	if !(w.CPUSeconds >= 0 && w.CPUSeconds <= maxWorkloadCPUSeconds) { // also refuses NaN
		return fmt.Errorf("cpu %v s: must be between 0 and %v", w.CPUSeconds, maxWorkloadCPUSeconds)
	}
	return nil
}

// args are the command-line arguments of the workload mode for w (after the program name).
func (w workload) args() []string {
	return []string{workloadCommand,
		"--memory-mib", strconv.Itoa(w.MemoryMiB),
		"--cpu-seconds", strconv.FormatFloat(w.CPUSeconds, 'f', -1, 64),
	}
}

// workloadResult is what the workload mode prints: one JSON object on one line.
type workloadResult struct {
	MemoryMiB    int     `json:"memory_mib"`    // mebibytes allocated and touched
	TouchedPages int     `json:"touched_pages"` // pages written
	CPUTimeS     float64 `json:"cpu_time_s"`    // the process's own CPU time (getrusage) when it stopped
	Checksum     uint64  `json:"checksum"`      // the result of the CPU burn, so it cannot be optimised away
}

// runWorkload is the workload mode: it parses args (the flags after "workload"), runs the workload
// and writes its result to stdout as one JSON line.
func runWorkload(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(workloadCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var w workload
	fs.IntVar(&w.MemoryMiB, "memory-mib", 64, "mebibytes of memory to allocate and touch")
	fs.Float64Var(&w.CPUSeconds, "cpu-seconds", 0.5, "CPU seconds (user+system, the process's own rusage) to burn")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("workload: unexpected argument %q", fs.Arg(0))
	}
	if err := w.validate(); err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	res, err := w.run()
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if _, err := stdout.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("workload: write result: %w", err)
	}
	return nil
}

// burnChunk is the number of burn iterations between two CPU-time readings (well under a
// millisecond of work).
const burnChunk = 1 << 16

// run touches the memory, then burns CPU until the process's own CPU time (getrusage
// RUSAGE_SELF, every thread) reaches w.CPUSeconds. The CPU time is read from the kernel rather than
// a wall-clock loop: on a loaded machine a wall-clock loop gets only part of a core and would burn
// less than asked. The memory stays referenced until the burn ends, so it is resident at once.
func (w workload) run() (workloadResult, error) {
	res := workloadResult{MemoryMiB: w.MemoryMiB}
	mem := make([]byte, w.MemoryMiB<<20)
	page := os.Getpagesize()
	for i := 0; i < len(mem); i += page {
		mem[i] = byte(i / page)
		res.TouchedPages++
	}
	x := uint64(len(mem)) | 1
	for {
		used, err := ownCPUTime()
		if err != nil {
			return res, err
		}
		res.CPUTimeS = used.Seconds()
		if res.CPUTimeS >= w.CPUSeconds {
			break
		}
		for i := range burnChunk {
			// A 64-bit linear congruential step, folding in the memory so it stays live.
			x = x*6364136223846793005 + 1442695040888963407
			if len(mem) > 0 {
				x += uint64(mem[(i*page)%len(mem)])
			}
		}
	}
	runtime.KeepAlive(mem)
	res.Checksum = x
	return res, nil
}

// ownCPUTime is the calling process's user + system CPU time so far.
func ownCPUTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
