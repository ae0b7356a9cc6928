package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gymtrace/gymtrace/capture"
)

// Target names, in the order each cell measures them.
const (
	TargetDirect  = "direct"  // the upstream itself
	TargetPlain   = "plain"   // httputil.ReverseProxy, no capture
	TargetCapture = "capture" // gymtrace proxy
	// TargetJournal is gymtrace proxy --durability journal (SPEC §0 D17), measured beside capture.
	TargetJournal = "capture-journal"
)

// Headline cell: the ratio the final report line gives (issue 6: small calls at concurrency 32).
const (
	headlineWorkload    = WorkloadSmall
	headlineConcurrency = 32
)

// Report is the result of one [Run]. Durations are in seconds (suffix _s) or milliseconds (_ms),
// sizes in bytes; a measurement that could not be made is absent (nil), never 0.
type Report struct {
	// GoVersion, OS and Arch describe the bench binary.
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	// NumCPU and GOMAXPROCS are the machine's CPUs and the bench's GOMAXPROCS (children run with
	// their own default, the same unless GOMAXPROCS is set in the environment).
	NumCPU     int `json:"num_cpu"`
	GOMAXPROCS int `json:"gomaxprocs"`
	// LoadAverage is /proc/loadavg's 1, 5 and 15 minute load when the run started: other work on
	// the machine makes the numbers noisy.
	LoadAverage [3]float64 `json:"load_average"`
	// DurationS is the duration budget ([Config.Duration]) and WallS the time the run took.
	DurationS float64 `json:"duration_s"`
	WallS     float64 `json:"wall_s"`
	// Fsync is the fsync latency measured where the capture directories live.
	Fsync FsyncStats `json:"fsync"`
	// Workloads describes the workloads run, in order.
	Workloads []WorkloadInfo `json:"workloads"`
	// Cells holds one entry per workload × concurrency, in run order.
	Cells []Cell `json:"cells"`
	// CapturePlainRatio is the headline: [Cell.CapturePlainRatio] of the cell named by
	// HeadlineCell (small calls at concurrency 32 when that cell ran; see [Report.Headline]).
	CapturePlainRatio float64 `json:"capture_plain_throughput_ratio"`
	HeadlineCell      string  `json:"headline_cell"`
	// JournalPlainRatio is the same cell's [Cell.JournalPlainRatio] (0 when it has no journal row).
	JournalPlainRatio float64 `json:"journal_plain_throughput_ratio"`
	// Interrupted is true when the run was stopped (signal, cancelled context) before every cell
	// ran: Cells holds the ones measured.
	Interrupted bool `json:"interrupted,omitempty"`
}

// WorkloadInfo describes one workload of a report.
type WorkloadInfo struct {
	// Name and Description are the workload's ([Workload]).
	Name        string `json:"name"`
	Description string `json:"description"`
	// RequestBytes and ResponseBytes are the body sizes of one call.
	RequestBytes  int `json:"request_bytes"`
	ResponseBytes int `json:"response_bytes"`
	// Events is the number of SSE events of a stream (0 for JSON).
	Events int `json:"events,omitempty"`
	// BudgetS is the time each target of each concurrency level got, in seconds.
	BudgetS float64 `json:"budget_s"`
}

// Cell is one workload at one concurrency against the three targets.
type Cell struct {
	// Workload is the workload's name and Concurrency the number of concurrent callers.
	Workload    string `json:"workload"`
	Concurrency int    `json:"concurrency"`
	// BudgetS is the time each target was given to start calls, in seconds.
	BudgetS float64 `json:"budget_s"`
	// Direct, Plain and Capture are the three targets' measurements.
	Direct  TargetResult `json:"direct"`
	Plain   TargetResult `json:"plain"`
	Capture TargetResult `json:"capture"`
	// CapturePlainRatio and CaptureDirectRatio are the capture target's throughput over the plain
	// proxy's and over the direct target's (c/b, c/a); 0 when the denominator is 0.
	CapturePlainRatio  float64 `json:"throughput_ratio_capture_plain"`
	CaptureDirectRatio float64 `json:"throughput_ratio_capture_direct"`
	// AddedP50MS and AddedP99MS are the latency capture adds over direct calls (capture − direct).
	AddedP50MS float64 `json:"added_latency_p50_ms"`
	AddedP99MS float64 `json:"added_latency_p99_ms"`
	// TTFBOverPlainP50MS and TTFBOverPlainP99MS are capture's time to first byte minus the plain
	// proxy's (streams only).
	TTFBOverPlainP50MS *float64 `json:"ttfb_over_plain_p50_ms,omitempty"`
	TTFBOverPlainP99MS *float64 `json:"ttfb_over_plain_p99_ms,omitempty"`
	// Verify is the check of the capture target's records.
	Verify Verification `json:"capture_records"`
	// Journal is the journaled capture target's measurement, JournalVerify the check of its
	// records and JournalPlainRatio its throughput over the plain proxy's; absent (0) when the
	// cell did not measure it.
	Journal           *TargetResult `json:"capture_journal,omitempty"`
	JournalVerify     *Verification `json:"capture_journal_records,omitempty"`
	JournalPlainRatio float64       `json:"throughput_ratio_journal_plain,omitempty"`
	// Memory is the capture proxy's peak RSS against issue 6's bound, for the sse1m workload only.
	Memory *MemoryCheck `json:"memory,omitempty"`
}

// TargetResult is what one target measured in one cell.
type TargetResult struct {
	// Target is [TargetDirect], [TargetPlain], [TargetCapture] or [TargetJournal].
	Target string `json:"target"`
	// Calls are the measured calls answered 200 with the whole body; Errors the measured calls
	// that were not (FirstError says why the first one failed).
	Calls      int    `json:"calls"`
	Errors     int    `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
	// ElapsedS is the measured phase, first start to last completion, in seconds.
	ElapsedS float64 `json:"elapsed_s"`
	// Throughput is in calls per second: the sum over the workers of each worker's successful calls
	// divided by the time from the start to that worker's last completion. Each worker is a closed
	// loop, so this is the rate the target sustains; unlike Calls / ElapsedS it does not drop when a
	// few workers start one more long call (a 1 s stream) just before the budget ends. It is at
	// least Calls / ElapsedS, and equal to it when all workers finish together.
	Throughput float64 `json:"calls_per_s"`
	// P50MS and P99MS are the latencies of the successful calls (request start to end of body).
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	// TTFBP50MS and TTFBP99MS are the times to the first body byte (reported for streams).
	TTFBP50MS *float64 `json:"ttfb_p50_ms,omitempty"`
	TTFBP99MS *float64 `json:"ttfb_p99_ms,omitempty"`
	// ProxyCPUS is the proxy process's CPU time (user + system) during the measured phase, and
	// ProxyPeakRSSBytes its peak RSS over its life (one cell); absent for the direct target.
	ProxyCPUS         *float64 `json:"proxy_cpu_s,omitempty"`
	ProxyPeakRSSBytes *int64   `json:"proxy_peak_rss_bytes,omitempty"`
	// BenchCPUS is the bench process's own CPU time (load generator and upstream) during the
	// measured phase.
	BenchCPUS float64 `json:"bench_cpu_s"`
	// Syncs are a capture proxy's store counts over its life (one cell, warm-up included), from
	// its --sync-stats-file, and FsyncsPerRecord their flushes per line appended; absent when the
	// proxy did not report them.
	Syncs           *capture.SyncStats `json:"syncs,omitempty"`
	FsyncsPerRecord *float64           `json:"fsyncs_per_record,omitempty"`
}

// Verification compares the capture records of a cell with the calls that reached the end of
// their answer.
type Verification struct {
	// Records is the number of readable records in the cell's rollout files (tolerant read).
	Records int `json:"records"`
	// Calls is the number of calls, warm-up included, whose answer was read to its end.
	Calls int `json:"calls"`
	// Invalid counts unreadable lines; Incomplete counts rollouts with a .capture.incomplete marker;
	// WithError counts records whose error_category is set (every bench call should succeed) and
	// WithoutResponse those whose response is null (a stream that was not reassembled).
	Invalid         int `json:"invalid_lines"`
	Incomplete      int `json:"incomplete_rollouts"`
	WithError       int `json:"records_with_error"`
	WithoutResponse int `json:"records_without_response"`
	// Tokens is the check of the token captures, for a token workload only.
	Tokens *TokenVerification `json:"token_entries,omitempty"`
	// Err is the reading failure, if any.
	Err string `json:"error,omitempty"`
}

// TokenVerification counts the token captures of a token workload's cell (docs/TOKENS.md §2):
// every answered call must have its entry, and no rollout may be incomplete.
type TokenVerification struct {
	// Entries is the number of token entries in the cell's rollouts.
	Entries int `json:"entries"`
	// IntentsWithoutEntries counts intents no entry answers (a call whose tokens were lost), and
	// IncompleteRollouts the rollouts marked incomplete (a call whose ids could not be read).
	IntentsWithoutEntries int `json:"intents_without_entries"`
	IncompleteRollouts    int `json:"incomplete_rollouts"`
}

// OK reports whether every call has exactly one clean record and, for a token workload, its
// token entry.
func (v Verification) OK() bool {
	if t := v.Tokens; t != nil && (t.Entries != v.Calls || t.IntentsWithoutEntries != 0 || t.IncompleteRollouts != 0) {
		return false
	}
	return v.Err == "" && v.Records == v.Calls && v.Invalid == 0 && v.Incomplete == 0 &&
		v.WithError == 0 && v.WithoutResponse == 0
}

// problems describes what is wrong besides the counts, for messages.
func (v Verification) problems() string {
	s := fmt.Sprintf("invalid lines %d, incomplete rollouts %d, records with error %d, records without response %d",
		v.Invalid, v.Incomplete, v.WithError, v.WithoutResponse)
	if t := v.Tokens; t != nil {
		s += fmt.Sprintf(", token entries %d, intents without entries %d, token-incomplete rollouts %d",
			t.Entries, t.IntentsWithoutEntries, t.IncompleteRollouts)
	}
	if v.Err != "" {
		s += "; " + v.Err
	}
	return s
}

// newTargetResult turns a load result into a target's row; TTFB is kept for streams.
func newTargetResult(target string, r loadResult, stream bool, benchCPU time.Duration) TargetResult {
	t := TargetResult{
		Target: target, Calls: r.ok, Errors: r.failed,
		ElapsedS:  r.elapsed.Seconds(),
		P50MS:     ms(percentile(r.latencies, 0.50)),
		P99MS:     ms(percentile(r.latencies, 0.99)),
		BenchCPUS: benchCPU.Seconds(),
	}
	if r.firstErr != nil {
		t.FirstError = r.firstErr.Error()
	}
	t.Throughput = r.rate
	if stream && len(r.ttfbs) > 0 {
		p50, p99 := ms(percentile(r.ttfbs, 0.50)), ms(percentile(r.ttfbs, 0.99))
		t.TTFBP50MS, t.TTFBP99MS = &p50, &p99
	}
	return t
}

// computeRatios fills the cell's ratios and deltas from its three targets' measurements.
func (c *Cell) computeRatios() {
	c.CapturePlainRatio = ratio(c.Capture.Throughput, c.Plain.Throughput)
	c.CaptureDirectRatio = ratio(c.Capture.Throughput, c.Direct.Throughput)
	c.AddedP50MS = c.Capture.P50MS - c.Direct.P50MS
	c.AddedP99MS = c.Capture.P99MS - c.Direct.P99MS
	c.TTFBOverPlainP50MS = diffPtr(c.Capture.TTFBP50MS, c.Plain.TTFBP50MS)
	c.TTFBOverPlainP99MS = diffPtr(c.Capture.TTFBP99MS, c.Plain.TTFBP99MS)
	if c.Journal != nil {
		c.JournalPlainRatio = ratio(c.Journal.Throughput, c.Plain.Throughput)
	}
}

// targets returns the cell's measured targets in table order.
func (c *Cell) targets() []*TargetResult {
	ts := []*TargetResult{&c.Direct, &c.Plain, &c.Capture}
	if c.Journal != nil {
		ts = append(ts, c.Journal)
	}
	return ts
}

// Headline returns the cell whose capture/plain ratio the report's last line gives: small calls at
// concurrency 32; when that cell did not run, the first workload run at the concurrency closest to
// 32 (the smaller one on a tie). It returns nil for a report without cells.
func (r *Report) Headline() *Cell {
	rank := func(c *Cell) []int {
		other, dist := 0, c.Concurrency-headlineConcurrency
		if c.Workload != headlineWorkload {
			other = 1
		}
		return []int{other, max(dist, -dist), c.Concurrency}
	}
	var best *Cell
	for i := range r.Cells {
		if c := &r.Cells[i]; best == nil || slices.Compare(rank(c), rank(best)) < 0 {
			best = c
		}
	}
	return best
}

// setHeadline fills CapturePlainRatio and HeadlineCell from [Report.Headline].
func (r *Report) setHeadline() {
	if c := r.Headline(); c != nil {
		r.CapturePlainRatio, r.JournalPlainRatio = c.CapturePlainRatio, c.JournalPlainRatio
		r.HeadlineCell = fmt.Sprintf("%s c=%d", c.Workload, c.Concurrency)
	}
}

// RatioLine is the report's last line: "capture/plain throughput ratio: R" with R the headline
// ratio to two decimals.
func (r *Report) RatioLine() string {
	return fmt.Sprintf("capture/plain throughput ratio: %.2f", r.CapturePlainRatio)
}

// Check returns nil when every call of every target succeeded and every capture cell has exactly
// one clean record per answered call; otherwise an error naming each failing cell.
func (r *Report) Check() error {
	var errs []error
	for i := range r.Cells {
		c := &r.Cells[i]
		name := fmt.Sprintf("%s c=%d", c.Workload, c.Concurrency)
		for _, t := range c.targets() {
			if t.Errors > 0 {
				errs = append(errs, fmt.Errorf("%s %s: %d failed calls (first: %s)", name, t.Target, t.Errors, t.FirstError))
			}
			if t.Calls == 0 && t.Errors == 0 {
				errs = append(errs, fmt.Errorf("%s %s: no call completed within the cell's budget of %.3fs: raise --duration", name, t.Target, c.BudgetS))
			}
		}
		if v := c.Verify; !v.OK() {
			errs = append(errs, fmt.Errorf("%s: capture records %d for %d answered calls (%s)", name, v.Records, v.Calls, v.problems()))
		}
		if v := c.JournalVerify; v != nil && !v.OK() {
			errs = append(errs, fmt.Errorf("%s: capture-journal records %d for %d answered calls (%s)", name, v.Records, v.Calls, v.problems()))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("bench check: %w", errors.Join(errs...))
	}
	return nil
}

// ratio is a/b, or 0 when b is not positive.
func ratio(a, b float64) float64 {
	if b <= 0 || math.IsNaN(a) || math.IsNaN(b) {
		return 0
	}
	return a / b
}

// diffPtr is *a − *b, or nil when either is absent.
func diffPtr(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	d := *a - *b
	return &d
}

// ms converts d to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile returns the nearest-rank p-quantile (0 < p ≤ 1) of sorted; 0 for an empty slice.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
