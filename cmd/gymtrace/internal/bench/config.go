package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// Defaults and limits of a [Config].
const (
	// DefaultDuration is the default total duration budget.
	DefaultDuration = 20 * time.Second
	// MaxConcurrency is the largest concurrency level accepted (each worker holds a connection to
	// the target and the proxies one to the upstream, and each worker has its own rollout file).
	MaxConcurrency = 1024
)

// numTargets is how many targets each cell measures: direct, plain, capture and capture-journal.
const numTargets = 4

// DefaultConcurrency lists the default concurrency levels (issue 6).
var DefaultConcurrency = []int{1, 32, 256}

// PlainProxyCommand is the hidden gymtrace subcommand that runs [ServePlainProxy]; the default
// [Config.Command] starts it for the plain target.
const PlainProxyCommand = "bench-plain-proxy"

// CommandFunc returns the command that runs the proxy of target ([TargetPlain], [TargetCapture] or
// [TargetJournal]) in front of upstream (a base URL, http://127.0.0.1:PORT). A capture proxy writes
// to captureDir (an absolute path; "" for the plain target), with `--token-source tokenSource`
// when tokenSource is not "" (a token workload's [Workload].TokenSource; its token store is the
// capture directory), and may write its store's capture.SyncStats as JSON to
// [SyncStatsPath](captureDir) when it exits. The command must listen on a free 127.0.0.1 port,
// print "listening on http://HOST:PORT" as its first stdout line when ready, and exit 0 after
// SIGTERM once the calls in flight are done. Run sets the command's Stdout, Stderr and, when unset,
// Env and SysProcAttr.
type CommandFunc func(ctx context.Context, target, upstream, captureDir, tokenSource string) (*exec.Cmd, error)

// Config is what [Run] measures. The zero value measures every workload at the default
// concurrency levels for the default duration, with the current executable as gymtrace.
type Config struct {
	// Workloads are the workloads to run, in order; nil means those of [WorkloadNames] ("all").
	Workloads []*Workload
	// Concurrency are the concurrency levels to run for each workload, in order, each between 1
	// and [MaxConcurrency]; nil means [DefaultConcurrency].
	Concurrency []int
	// Duration is the total time spent starting calls, split among the cells (see the package
	// documentation); calls in flight at the end of a cell still complete, and starting the
	// proxies takes time too, so a run lasts longer. Default [DefaultDuration]; negative is an
	// error.
	Duration time.Duration
	// Command builds the proxy commands; nil means [GymtraceCommand] of the current executable
	// (os.Executable): `gymtrace bench-plain-proxy` and `gymtrace proxy`.
	Command CommandFunc
	// TempDir is where the run's temporary capture directory is created (and the fsync probe
	// runs); "" means os.TempDir(). It is removed at the end of the run.
	TempDir string
	// Progress, when set, receives one line per target measured (for a terminal); nil means none.
	Progress io.Writer
}

// GymtraceCommand returns a [CommandFunc] running the gymtrace executable exe: the plain target is
// `exe bench-plain-proxy --upstream U --listen 127.0.0.1:0`, the capture target
// `exe proxy --upstream U --capture-dir D --listen 127.0.0.1:0 --sync-stats-file D.sync.json` and
// the journal target the same with `--durability journal`; both add `--token-source S` for a
// token workload.
func GymtraceCommand(exe string) CommandFunc {
	return func(ctx context.Context, target, upstream, captureDir, tokenSource string) (*exec.Cmd, error) {
		captureArgs := []string{"proxy", "--upstream", upstream, "--capture-dir", captureDir, "--listen", "127.0.0.1:0", "--sync-stats-file", SyncStatsPath(captureDir)}
		if tokenSource != "" {
			captureArgs = append(captureArgs, "--token-source", tokenSource)
		}
		switch target {
		case TargetPlain:
			return exec.Command(exe, PlainProxyCommand, "--upstream", upstream, "--listen", "127.0.0.1:0"), nil
		case TargetCapture:
			return exec.Command(exe, captureArgs...), nil
		case TargetJournal:
			return exec.Command(exe, append(captureArgs, "--durability", "journal")...), nil
		default:
			return nil, fmt.Errorf("bench: no command for target %q", target)
		}
	}
}

// withDefaults returns c with its defaults applied, or an error naming the first invalid field.
func (c Config) withDefaults() (Config, error) {
	if c.Workloads == nil {
		c.Workloads, _ = LookupWorkloads([]string{"all"}) // "all" always resolves
	}
	if len(c.Workloads) == 0 {
		return c, fmt.Errorf("bench: no workload to run")
	}
	if c.Concurrency == nil {
		c.Concurrency = DefaultConcurrency
	}
	if len(c.Concurrency) == 0 {
		return c, fmt.Errorf("bench: no concurrency level to run")
	}
	levels := make([]int, 0, len(c.Concurrency))
	for _, n := range c.Concurrency {
		if n < 1 || n > MaxConcurrency {
			return c, fmt.Errorf("bench: concurrency %d must be between 1 and %d", n, MaxConcurrency)
		}
		if err := checkFileLimit(n); err != nil {
			return c, err
		}
		if !slices.Contains(levels, n) {
			levels = append(levels, n) // a level named twice runs once
		}
	}
	c.Concurrency = levels
	switch {
	case c.Duration < 0:
		return c, fmt.Errorf("bench: duration %v must be positive", c.Duration)
	case c.Duration == 0:
		c.Duration = DefaultDuration
	}
	if c.Command == nil {
		exe, err := os.Executable()
		if err != nil {
			return c, fmt.Errorf("bench: find the gymtrace executable: %w", err)
		}
		c.Command = GymtraceCommand(exe)
	}
	// The proxies get the capture directory as a flag that must be absolute; a relative TMPDIR is
	// taken from the working directory.
	c.TempDir = cmp.Or(c.TempDir, os.TempDir())
	abs, err := filepath.Abs(c.TempDir)
	if err != nil {
		return c, fmt.Errorf("bench: temporary directory %q (TMPDIR): %w", c.TempDir, err)
	}
	c.TempDir = abs
	return c, nil
}

// SyncStatsPath is where a capture proxy writing to captureDir reports its store's sync counts.
func SyncStatsPath(captureDir string) string { return captureDir + ".sync.json" }

// budget returns the time each target of each concurrency level of w gets: Duration split among the
// workloads by weight, then evenly among the concurrency levels and the four targets.
func (c Config) budget(w *Workload) time.Duration {
	total := 0
	for _, x := range c.Workloads {
		total += max(x.weight, 1)
	}
	share := c.Duration * time.Duration(max(w.weight, 1)) / time.Duration(total)
	return share / time.Duration(len(c.Concurrency)*numTargets)
}
