package bench

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/texttable"
)

// WriteText writes the report as a header, one aligned table row per workload × concurrency ×
// target, the capture record check and, as the very last line, [Report.RatioLine]. Columns: calls
// and failed calls measured; throughput; p50/p99 latency; time to first byte (streams); the proxy's
// CPU per call and peak RSS; the latency added over direct calls; on capture rows the throughput
// ratios capture/plain (c/b) and capture/direct (c/a), the store's fsyncs per record (all
// flushes: rollout files, journal, directories) and the median flush the calls waited on
// ([capture.SyncStats.WaitedFlushP50]). "-" marks what does not apply or could not be measured.
// For each concurrency-1 cell with a journal row, a line sets the journal's added p50 against
// issue #18's budget (plain's added p50 + one fsync + 0.15 ms), with the probe's back-to-back fsync
// and with the flush the journal's calls waited on. When the headline cell measured the journal,
// the line before the last gives its ratio.
func (r *Report) WriteText(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "gymtrace bench: %s %s/%s, %d CPUs (GOMAXPROCS %d), load average %.2f %.2f %.2f at start\n",
		r.GoVersion, r.OS, r.Arch, r.NumCPU, r.GOMAXPROCS, r.LoadAverage[0], r.LoadAverage[1], r.LoadAverage[2])
	if r.NumCPU > 0 && r.LoadAverage[0] > float64(r.NumCPU)/2 {
		fmt.Fprintf(&b, "warning: load average %.1f on %d CPUs: other work competes with the bench and its children; the numbers are noisy\n",
			r.LoadAverage[0], r.NumCPU)
	}
	fmt.Fprintf(&b, "fsync in %s: p50 %.3f ms, p99 %.3f ms, mean %.3f ms (%d x 1 KiB write+fsync back to back); after %.0f ms idle each: p50 %.3f ms, p99 %.3f ms, mean %.3f ms: the floor under every durable capture\n",
		r.Fsync.Dir, r.Fsync.P50MS, r.Fsync.P99MS, r.Fsync.MeanMS, r.Fsync.Samples, r.Fsync.IdleGapMS, r.Fsync.IdleP50MS, r.Fsync.IdleP99MS, r.Fsync.IdleMeanMS)
	b.WriteString("targets: direct = in-process upstream on 127.0.0.1; plain = httputil.ReverseProxy (child process); capture = gymtrace proxy (child process); capture-journal = gymtrace proxy --durability journal\n")
	b.WriteString("fsync/rec: the capture store's fsyncs and fdatasyncs (rollout files, journal, directories) per record appended, over the proxy's life\n")
	b.WriteString("flush p50: the median flush the calls waited on (journal: the batch's fdatasync; per-record: the rollout file's fsync), the flush call alone\n")
	b.WriteString("cpu us/call: proxy CPU time in 10 ms clock ticks over the cell's calls; \"~\" marks a figure from under 0.1 s of CPU (rough)\n")
	fmt.Fprintf(&b, "workloads (%.0fs budget; seconds per target and concurrency):\n", r.DurationS)
	for _, wl := range r.Workloads {
		fmt.Fprintf(&b, "  %-8s %5.2fs  %s\n", wl.Name, wl.BudgetS, wl.Description)
	}
	b.WriteByte('\n')

	tbl := texttable.New(false)
	tbl.AppendHeader(table.Row{"workload", "conc", "target", "calls", "failed", "calls/s", "p50 ms", "p99 ms", "ttfb p50", "ttfb p99", "cpu us/call", "rss MiB", "+p50 ms", "+p99 ms", "c/b", "c/a", "fsync/rec", "flush p50"})
	for i := range r.Cells {
		c := &r.Cells[i]
		for _, t := range c.targets() {
			wl, conc := "", ""
			if t == &c.Direct {
				wl, conc = c.Workload, fmt.Sprint(c.Concurrency)
			}
			added50, added99, cb, ca := "-", "-", "", ""
			if t != &c.Direct {
				added50 = fmt.Sprintf("%+.3f", t.P50MS-c.Direct.P50MS)
				added99 = fmt.Sprintf("%+.3f", t.P99MS-c.Direct.P99MS)
			}
			switch t {
			case &c.Capture:
				cb, ca = fmt.Sprintf("%.2f", c.CapturePlainRatio), fmt.Sprintf("%.2f", c.CaptureDirectRatio)
			case c.Journal:
				cb, ca = fmt.Sprintf("%.2f", c.JournalPlainRatio), fmt.Sprintf("%.2f", ratio(t.Throughput, c.Direct.Throughput))
			}
			fsyncs, flush := "-", "-"
			if t.FsyncsPerRecord != nil {
				fsyncs = fmt.Sprintf("%.3f", *t.FsyncsPerRecord)
			}
			if ms, ok := t.waitedFlushP50MS(); ok {
				flush = fmt.Sprintf("%.3f", ms)
			}
			tbl.AppendRow(table.Row{wl, conc, t.Target, strconv.Itoa(t.Calls), strconv.Itoa(t.Errors), fmt.Sprintf("%.1f", t.Throughput),
				fmt.Sprintf("%.3f", t.P50MS), fmt.Sprintf("%.3f", t.P99MS), optMS(t.TTFBP50MS), optMS(t.TTFBP99MS),
				cpuPerCall(t), rssMiB(t.ProxyPeakRSSBytes), added50, added99, cb, ca, fsyncs, flush})
		}
	}
	b.WriteString(texttable.Render(tbl))
	b.WriteByte('\n')

	var checks []string
	allOK := true
	for i := range r.Cells {
		c := &r.Cells[i]
		v := c.Verify
		s := fmt.Sprintf("%s c=%d %d/%d", c.Workload, c.Concurrency, v.Records, v.Calls)
		if v.Tokens != nil {
			s += fmt.Sprintf(" + %d token entries", v.Tokens.Entries)
		}
		if !v.OK() {
			allOK = false
			s += " MISMATCH (" + v.problems() + ")"
		}
		if jv := c.JournalVerify; jv != nil {
			s += fmt.Sprintf(" (journal %d/%d", jv.Records, jv.Calls)
			if jv.Tokens != nil {
				s += fmt.Sprintf(" + %d token entries", jv.Tokens.Entries)
			}
			if !jv.OK() {
				allOK = false
				s += " MISMATCH: " + jv.problems()
			}
			s += ")"
		}
		checks = append(checks, s)
	}
	verdict := "every answered call has its record"
	if !allOK {
		verdict = "MISMATCH"
	}
	fmt.Fprintf(&b, "capture records / answered calls (tolerant read, warm-up included): %s: %s\n", strings.Join(checks, ", "), verdict)
	for i := range r.Cells {
		c := &r.Cells[i]
		for _, t := range c.targets() {
			if t.Errors > 0 {
				fmt.Fprintf(&b, "failed calls: %s c=%d %s: %d, first: %s\n", c.Workload, c.Concurrency, t.Target, t.Errors, t.FirstError)
			}
		}
	}
	for i := range r.Cells {
		if c := &r.Cells[i]; c.Memory != nil {
			fmt.Fprintln(&b, c.Memory.line(c.Workload, c.Concurrency))
		}
	}
	for i := range r.Cells {
		if line, ok := r.Cells[i].journalLatencyLine(r.Fsync); ok {
			b.WriteString(line + "\n")
		}
	}
	fmt.Fprintf(&b, "wall time %.1fs for a %.0fs budget (calls in flight at a cell's end complete; proxies start and drain per cell)\n", r.WallS, r.DurationS)
	if r.Interrupted {
		b.WriteString("INTERRUPTED: the run was stopped before its end; only the cells above were measured\n")
	}
	if h := r.Headline(); h != nil && (h.Workload != headlineWorkload || h.Concurrency != headlineConcurrency) {
		fmt.Fprintf(&b, "(%s c=%d was not run: the ratio below is %s c=%d's)\n", headlineWorkload, headlineConcurrency, h.Workload, h.Concurrency)
	}
	if h := r.Headline(); h != nil && h.Journal != nil {
		fmt.Fprintf(&b, "capture-journal/plain throughput ratio: %.2f\n", r.JournalPlainRatio)
	}
	b.WriteString(r.RatioLine())
	b.WriteByte('\n')
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("bench report: %w", err)
	}
	return nil
}

// optMS formats an optional millisecond value.
func optMS(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *v)
}

// cpuPerCall is the proxy's CPU time per measured call in microseconds.
func cpuPerCall(t *TargetResult) string {
	n := t.Calls + t.Errors
	if t.ProxyCPUS == nil || n == 0 {
		return "-"
	}
	v := fmt.Sprintf("%.0f", *t.ProxyCPUS*1e6/float64(n))
	if *t.ProxyCPUS < cpuPreciseS {
		v = "~" + v // a few clock ticks: see the legend
	}
	return v
}

// cpuPreciseS is the proxy CPU time below which the per-call figure is marked as rough: CPU time
// is read in 10 ms clock ticks, so under ten of them a single tick moves it by over 10%.
const cpuPreciseS = 0.1

// rssMiB formats an optional size in MiB.
func rssMiB(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(*v)/(1<<20))
}

// waitedFlushP50MS returns the median flush the target's calls waited on, in ms, when its proxy
// reported one.
func (t *TargetResult) waitedFlushP50MS() (float64, bool) {
	if t.Syncs == nil || t.Syncs.WaitedFlushes == 0 {
		return 0, false
	}
	return float64(t.Syncs.WaitedFlushP50) / float64(time.Millisecond), true
}

// journalLatencyBudgetMS is what issue #18 lets the journal add at concurrency 1 beyond the plain
// proxy's added p50 and one fsync.
const journalLatencyBudgetMS = 0.15

// journalLatencyLine sets a concurrency-1 cell's journal added p50 against plain's added p50 + one
// fsync + journalLatencyBudgetMS, the fsync taken as the probe's back-to-back p50, as its p50 after
// an idle gap (what a lone call's fsync meets) and as the journal's waited flush p50; ok is false
// for other cells.
func (c *Cell) journalLatencyLine(probe FsyncStats) (string, bool) {
	if c.Concurrency != 1 || c.Journal == nil || c.Journal.Calls == 0 || c.Plain.Calls == 0 {
		return "", false
	}
	added := c.Journal.P50MS - c.Direct.P50MS
	plain := c.Plain.P50MS - c.Direct.P50MS
	verdict := func(fsync float64) string {
		limit := plain + fsync + journalLatencyBudgetMS
		if added > limit {
			return fmt.Sprintf("limit %.3f ms: OVER by %.3f ms", limit, added-limit)
		}
		return fmt.Sprintf("limit %.3f ms: met, %.3f ms to spare", limit, limit-added)
	}
	line := fmt.Sprintf("c=1 %s: journal added p50 %+.3f ms against plain's %+.3f + one fsync + %.2f; with the probe's back-to-back fsync (%.3f ms) %s",
		c.Workload, added, plain, journalLatencyBudgetMS, probe.P50MS, verdict(probe.P50MS))
	if probe.IdleP50MS > 0 {
		line += fmt.Sprintf("; with its fsync after %.0f ms idle (%.3f ms) %s", probe.IdleGapMS, probe.IdleP50MS, verdict(probe.IdleP50MS))
	}
	if waited, ok := c.Journal.waitedFlushP50MS(); ok {
		line += fmt.Sprintf("; with the flush its calls waited on (%.3f ms) %s", waited, verdict(waited))
	}
	return line, true
}
