package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// Run measures every workload × concurrency cell of cfg against the three targets (see the package
// documentation) and returns the report. It returns an error, with the cells measured so far, when
// the measurement itself could not be made: a bad cfg, a proxy that did not start or did not stop
// cleanly, the temporary directory, or ctx ending (the error then wraps ctx.Err()). Failed calls and
// capture records that do not match are not errors of Run: they are in the report, and
// [Report.Check] reports them. Everything Run starts is stopped, and its temporary directory
// removed, before it returns.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	rep := &Report{
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		LoadAverage: loadAverage(),
		DurationS:   cfg.Duration.Seconds(),
	}
	for _, w := range cfg.Workloads {
		rep.Workloads = append(rep.Workloads, WorkloadInfo{
			Name: w.Name, Description: w.Description,
			RequestBytes: len(w.Request), ResponseBytes: w.ResponseBytes(), Events: len(w.Events),
			BudgetS: cfg.budget(w).Seconds(),
		})
	}
	tmp, err := os.MkdirTemp(cfg.TempDir, "gymtrace-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: temporary capture directory in %s (TMPDIR): %w", cfg.TempDir, err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if rep.Fsync, err = measureFsync(tmp, fsyncSamples); err != nil {
		return nil, err
	}
	defer func() {
		rep.WallS = time.Since(began).Seconds()
		rep.setHeadline()
	}()
	for _, w := range cfg.Workloads {
		if err := runWorkload(ctx, cfg, rep, tmp, w); err != nil {
			rep.Interrupted = ctx.Err() != nil
			return rep, err
		}
	}
	if ctx.Err() != nil { // stopped between cells or in a cell's last calls
		rep.Interrupted = true
		return rep, fmt.Errorf("bench: %w", ctx.Err())
	}
	return rep, nil
}

// runWorkload starts w's upstream and measures w at every concurrency level.
func runWorkload(ctx context.Context, cfg Config, rep *Report, tmp string, w *Workload) (err error) {
	up, err := startUpstream(w)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, up.close()) }()
	for _, n := range cfg.Concurrency {
		cell, err := runCell(ctx, cfg, tmp, up.url, w, n)
		if err != nil {
			return err
		}
		rep.Cells = append(rep.Cells, cell)
	}
	return nil
}

// runCell measures w at concurrency n against the four targets.
func runCell(ctx context.Context, cfg Config, tmp, upURL string, w *Workload, n int) (Cell, error) {
	budget := cfg.budget(w)
	cell := Cell{Workload: w.Name, Concurrency: n, BudgetS: budget.Seconds()}
	var err error
	if cell.Direct, _, err = measureTarget(ctx, cfg, TargetDirect, upURL, "", w, n, budget); err != nil {
		return cell, err
	}
	if cell.Plain, _, err = measureTarget(ctx, cfg, TargetPlain, upURL, "", w, n, budget); err != nil {
		return cell, err
	}
	dir := filepath.Join(tmp, fmt.Sprintf("%s-c%d", w.Name, n))
	var answered int
	cell.Capture, answered, err = measureTarget(ctx, cfg, TargetCapture, upURL, dir, w, n, budget)
	if err != nil {
		return cell, err
	}
	cell.Verify = verifyCaptures(dir, answered, w.TokenSource != "")
	if err := os.RemoveAll(dir); err != nil {
		return cell, fmt.Errorf("bench: remove %s: %w", dir, err)
	}
	jdir := dir + "-journal"
	journal, answered, err := measureTarget(ctx, cfg, TargetJournal, upURL, jdir, w, n, budget)
	if err != nil {
		return cell, err
	}
	jv := verifyCaptures(jdir, answered, w.TokenSource != "")
	cell.Journal, cell.JournalVerify = &journal, &jv
	if err := os.RemoveAll(jdir); err != nil {
		return cell, fmt.Errorf("bench: remove %s: %w", jdir, err)
	}
	cell.computeRatios()
	if w.Name == WorkloadSSE1M {
		cell.Memory = newMemoryCheck(int64(n)*int64(w.ResponseBytes()), cell.Capture.ProxyPeakRSSBytes)
	}
	return cell, nil
}

// measureTarget runs w at concurrency n for budget against one target: the upstream itself
// (direct) or a proxy child started for this measurement and stopped after it. It returns the
// target's row and the number of calls (warm-up included) whose answer was read to its end.
func measureTarget(ctx context.Context, cfg Config, target, upURL, captureDir string, w *Workload, n int, budget time.Duration) (TargetResult, int, error) {
	base := upURL
	var ch *child
	if target != TargetDirect {
		cmd, err := cfg.Command(ctx, target, upURL, captureDir, w.TokenSource)
		if err != nil {
			return TargetResult{}, 0, err
		}
		if ch, err = startChild(ctx, cmd); err != nil {
			return TargetResult{}, 0, err
		}
		base = ch.url
	}
	g := newLoadGen(base, w, n)
	var benchCPU0, childCPU0 time.Duration
	var childCPUErr error
	res := g.run(ctx, budget, func() {
		benchCPU0 = selfCPU()
		if ch != nil {
			childCPU0, childCPUErr = procCPU(ch.pid())
		}
	})
	benchCPU := selfCPU() - benchCPU0
	row := newTargetResult(target, res, w.Stream(), benchCPU)
	g.close()
	if ch != nil {
		if cpu1, err := procCPU(ch.pid()); err == nil && childCPUErr == nil {
			s := (cpu1 - childCPU0).Seconds()
			row.ProxyCPUS = &s
		}
		if rss, err := procPeakRSS(ch.pid()); err == nil {
			row.ProxyPeakRSSBytes = &rss
		}
		if err := ch.stop(); err != nil {
			return row, res.answered, err
		}
		row.setSyncs(captureDir)
	}
	if cfg.Progress != nil {
		_, _ = fmt.Fprintf(cfg.Progress, "bench: %s c=%d %s: %d calls in %.2fs, %.1f calls/s, %d errors\n",
			w.Name, n, target, row.Calls, row.ElapsedS, row.Throughput, row.Errors)
	}
	if err := ctx.Err(); err != nil {
		return row, res.answered, fmt.Errorf("bench: %w", err)
	}
	return row, res.answered, nil
}
