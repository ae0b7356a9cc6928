package bench

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

func TestPercentile(t *testing.T) {
	ds := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n)
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", ds(7), 0.99, 7},
		{"median of two is the lower", ds(1, 2), 0.5, 1},
		{"median of three", ds(1, 2, 3), 0.5, 2},
		{"p99 of 100", hundred, 0.99, 99},
		{"p50 of 100", hundred, 0.50, 50},
		{"p100", hundred, 1, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, percentile(tc.sorted, tc.p))
		})
	}
}

func TestNewTargetResult(t *testing.T) {
	res := loadResult{
		ok: 4, failed: 1, answered: 5, elapsed: 2 * time.Second, rate: 2.5,
		latencies: []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 40 * time.Millisecond},
		ttfbs:     []time.Duration{time.Millisecond / 2, time.Millisecond, time.Millisecond, 2 * time.Millisecond},
		firstErr:  errors.New("status 500"),
	}
	t.Run("json", func(t *testing.T) {
		r := newTargetResult(TargetPlain, res, false, time.Second)
		assert.Equal(t, TargetResult{
			Target: TargetPlain, Calls: 4, Errors: 1, FirstError: "status 500", ElapsedS: 2,
			Throughput: 2.5, P50MS: 2, P99MS: 40, BenchCPUS: 1,
		}, r)
	})
	t.Run("stream", func(t *testing.T) {
		r := newTargetResult(TargetCapture, res, true, 0)
		require.NotNil(t, r.TTFBP50MS)
		assert.Equal(t, 1.0, *r.TTFBP50MS)
		assert.Equal(t, 2.0, *r.TTFBP99MS)
	})
	t.Run("nothing measured", func(t *testing.T) {
		r := newTargetResult(TargetDirect, loadResult{}, true, 0)
		assert.Zero(t, r.Throughput)
		assert.Nil(t, r.TTFBP50MS)
	})
}

func TestComputeRatios(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	c := Cell{
		Direct:  TargetResult{Throughput: 1000, P50MS: 1, P99MS: 3},
		Plain:   TargetResult{Throughput: 800, P50MS: 1.2, P99MS: 3.5, TTFBP50MS: f(0.4), TTFBP99MS: f(1)},
		Capture: TargetResult{Throughput: 600, P50MS: 1.5, P99MS: 5, TTFBP50MS: f(0.5), TTFBP99MS: f(1.5)},
	}
	c.computeRatios()
	assert.Equal(t, 0.75, c.CapturePlainRatio)
	assert.Equal(t, 0.6, c.CaptureDirectRatio)
	assert.Equal(t, 0.5, c.AddedP50MS)
	assert.Equal(t, 2.0, c.AddedP99MS)
	assert.InDelta(t, 0.1, *c.TTFBOverPlainP50MS, 1e-12)
	assert.Equal(t, 0.5, *c.TTFBOverPlainP99MS)

	zero := Cell{Capture: TargetResult{Throughput: 5}}
	zero.computeRatios()
	assert.Zero(t, zero.CapturePlainRatio, "no plain throughput: no ratio")
	assert.Nil(t, zero.TTFBOverPlainP50MS)
}

func TestHeadline(t *testing.T) {
	cells := func(spec ...string) []Cell {
		var out []Cell
		for _, s := range spec {
			name, conc, _ := strings.Cut(s, "/")
			n, err := strconv.Atoi(conc)
			require.NoError(t, err)
			out = append(out, Cell{Workload: name, Concurrency: n})
		}
		return out
	}
	tests := []struct {
		name  string
		cells []Cell
		want  string
	}{
		{"none", nil, ""},
		{"the default run", cells("small/1", "small/32", "small/256", "json20k/32", "sse200/32"), "small/32"},
		{"small closest to 32", cells("json20k/32", "small/4", "small/256"), "small/4"},
		{"tie goes to the lower", cells("small/48", "small/16"), "small/16"},
		{"no small: first workload closest", cells("json20k/1", "sse200/32", "json20k/32"), "sse200/32"},
		{"no small, tie: first in order", cells("sse200/8", "json20k/8"), "sse200/8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Cells: tc.cells}
			h := r.Headline()
			if tc.want == "" {
				assert.Nil(t, h)
				return
			}
			require.NotNil(t, h)
			assert.Equal(t, tc.want, h.Workload+"/"+strconv.Itoa(h.Concurrency))
		})
	}
}

func TestRatioLine(t *testing.T) {
	r := &Report{Cells: []Cell{
		{Workload: "small", Concurrency: 1, CapturePlainRatio: 0.5},
		{Workload: "small", Concurrency: 32, CapturePlainRatio: 0.8349},
	}}
	r.setHeadline()
	assert.Equal(t, "small c=32", r.HeadlineCell)
	assert.Equal(t, "capture/plain throughput ratio: 0.83", r.RatioLine())
	assert.Regexp(t, ratioLineRE, r.RatioLine())

	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out))
	assert.True(t, strings.HasSuffix(out.String(), "\ncapture/plain throughput ratio: 0.83\n"), out.String())
	assert.NotContains(t, out.String(), "was not run", "the headline cell ran")
	assert.NotContains(t, out.String(), "warning: load average")

	r.NumCPU, r.LoadAverage = 2, [3]float64{3.5, 1, 1}
	out.Reset()
	require.NoError(t, r.WriteText(&out))
	assert.Contains(t, out.String(), "warning: load average 3.5 on 2 CPUs")
}

func TestReportCheck(t *testing.T) {
	good := Verification{Records: 10, Calls: 10}
	tests := []struct {
		name    string
		cell    Cell
		noCalls bool // leave every target's Calls at 0
		wantErr []string
	}{
		{name: "clean", cell: Cell{Verify: good}},
		{name: "missing records", cell: Cell{Verify: Verification{Records: 9, Calls: 10}},
			wantErr: []string{"small c=32: capture records 9 for 10 answered calls"}},
		{name: "invalid line", cell: Cell{Verify: Verification{Records: 10, Calls: 10, Invalid: 1}},
			wantErr: []string{"invalid lines 1"}},
		{name: "incomplete", cell: Cell{Verify: Verification{Records: 10, Calls: 10, Incomplete: 2}},
			wantErr: []string{"incomplete rollouts 2"}},
		{name: "record with error", cell: Cell{Verify: Verification{Records: 10, Calls: 10, WithError: 1}},
			wantErr: []string{"records with error 1"}},
		{name: "stream not reassembled", cell: Cell{Verify: Verification{Records: 10, Calls: 10, WithoutResponse: 3}},
			wantErr: []string{"records without response 3"}},
		{name: "read error", cell: Cell{Verify: Verification{Records: 10, Calls: 10, Err: "open: denied"}},
			wantErr: []string{"open: denied"}},
		{name: "failed calls", cell: Cell{Verify: good, Plain: TargetResult{Target: TargetPlain, Errors: 2, FirstError: "EOF"}},
			wantErr: []string{"small c=32 plain: 2 failed calls (first: EOF)"}},
		{name: "no call completed", noCalls: true, cell: Cell{BudgetS: 0.001, Verify: Verification{},
			Direct: TargetResult{Target: TargetDirect}, Plain: TargetResult{Target: TargetPlain}, Capture: TargetResult{Target: TargetCapture}},
			wantErr: []string{"small c=32 direct: no call completed within the cell's budget of 0.001s: raise --duration", "small c=32 capture: no call completed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cell.Workload, tc.cell.Concurrency = "small", 32
			for _, tr := range []*TargetResult{&tc.cell.Direct, &tc.cell.Plain, &tc.cell.Capture} {
				if tr.Errors == 0 && !tc.noCalls {
					tr.Calls = 10
				}
			}
			r := &Report{Cells: []Cell{tc.cell}}
			err := r.Check()
			if tc.wantErr == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.wantErr {
				assert.Contains(t, err.Error(), w)
			}
			var out bytes.Buffer
			require.NoError(t, r.WriteText(&out))
			switch {
			case tc.noCalls:
				assert.Contains(t, out.String(), "capture/plain throughput ratio: 0.00")
			case tc.cell.Verify.OK():
				assert.Contains(t, out.String(), "failed calls: small c=32 plain: 2, first: EOF")
			default:
				assert.Contains(t, out.String(), "MISMATCH")
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Run("zero value", func(t *testing.T) {
		c, err := Config{}.withDefaults()
		require.NoError(t, err)
		assert.Len(t, c.Workloads, 3)
		assert.Equal(t, []int{1, 32, 256}, c.Concurrency)
		assert.Equal(t, 20*time.Second, c.Duration)
		assert.NotNil(t, c.Command)
		assert.NotEmpty(t, c.TempDir)
		// 20 s over weights 1+1+2, then 3 levels × 4 targets.
		assert.Equal(t, 5*time.Second/12, c.budget(c.Workloads[0]))
		assert.Equal(t, 10*time.Second/12, c.budget(c.Workloads[2]))
	})
	for _, tc := range []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"no workloads", Config{Workloads: []*Workload{}}, "no workload to run"},
		{"no levels", Config{Concurrency: []int{}}, "no concurrency level"},
		{"zero concurrency", Config{Concurrency: []int{1, 0}}, "concurrency 0 must be between 1 and 1024"},
		{"too much concurrency", Config{Concurrency: []int{1025}}, "concurrency 1025 must be between 1 and 1024"},
		{"negative duration", Config{Duration: -time.Second}, "duration -1s must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.cfg.withDefaults()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			_, err = Run(t.Context(), tc.cfg)
			assert.ErrorContains(t, err, tc.wantErr, "Run refuses it before starting anything")
		})
	}
}

func TestGymtraceCommand(t *testing.T) {
	f := GymtraceCommand("/opt/gymtrace")
	ctx := context.Background()
	plain, err := f(ctx, TargetPlain, "http://127.0.0.1:9", "", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"/opt/gymtrace", "bench-plain-proxy", "--upstream", "http://127.0.0.1:9", "--listen", "127.0.0.1:0"}, plain.Args)
	capt, err := f(ctx, TargetCapture, "http://127.0.0.1:9", "/tmp/c", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"/opt/gymtrace", "proxy", "--upstream", "http://127.0.0.1:9", "--capture-dir", "/tmp/c", "--listen", "127.0.0.1:0", "--sync-stats-file", "/tmp/c.sync.json"}, capt.Args)
	journal, err := f(ctx, TargetJournal, "http://127.0.0.1:9", "/tmp/j", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"/opt/gymtrace", "proxy", "--upstream", "http://127.0.0.1:9", "--capture-dir", "/tmp/j", "--listen", "127.0.0.1:0", "--sync-stats-file", "/tmp/j.sync.json", "--durability", "journal"}, journal.Args)
	tokens, err := f(ctx, TargetJournal, "http://127.0.0.1:9", "/tmp/j", "vllm")
	require.NoError(t, err)
	assert.Equal(t, []string{"/opt/gymtrace", "proxy", "--upstream", "http://127.0.0.1:9", "--capture-dir", "/tmp/j", "--listen", "127.0.0.1:0", "--sync-stats-file", "/tmp/j.sync.json", "--token-source", "vllm", "--durability", "journal"}, tokens.Args,
		"a token workload's capture targets run with --token-source")
	_, err = f(ctx, TargetDirect, "http://127.0.0.1:9", "", "")
	assert.ErrorContains(t, err, `no command for target "direct"`)
}

func TestMemoryCheck(t *testing.T) {
	mib := int64(1 << 20)
	peak := func(n int64) *int64 { return &n }
	tests := []struct {
		name     string
		inFlight int64
		peak     *int64
		wantMet  bool
		wantLine string
	}{
		{name: "within the bound", inFlight: 256 * mib, peak: peak(660 * mib), wantMet: true,
			wantLine: "memory: sse1m c=256: capture proxy peak RSS 660 MiB with 256 MiB of responses in flight; bound 2.5 × in flight + 64 MiB = 704 MiB: met"},
		{name: "at the bound", inFlight: 256 * mib, peak: peak(704 * mib), wantMet: true},
		{name: "over the bound", inFlight: 256 * mib, peak: peak(705 * mib), wantMet: false},
		{name: "not measured", inFlight: mib, peak: nil, wantMet: false,
			wantLine: "memory: sse1m c=256: capture proxy peak RSS unknown with 1 MiB of responses in flight; bound 2.5 × in flight + 64 MiB = 66 MiB: NOT met"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMemoryCheck(tt.inFlight, tt.peak)
			assert.Equal(t, tt.wantMet, m.Met)
			assert.Equal(t, int64(2.5*float64(tt.inFlight))+64*mib, m.BoundBytes)
			if tt.wantLine != "" {
				assert.Equal(t, tt.wantLine, m.line("sse1m", 256))
			}
		})
	}
}

func TestReportInterrupted(t *testing.T) {
	good := Verification{Records: 1, Calls: 1}
	r := &Report{Cells: []Cell{{Workload: "small", Concurrency: 1, Verify: good}}, Interrupted: true}
	r.setHeadline()
	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out))
	text := out.String()
	assert.Contains(t, text, "INTERRUPTED: the run was stopped before its end")
	assert.True(t, strings.HasSuffix(text, "capture/plain throughput ratio: 0.00\n"), "the last line stays the ratio line")
	out.Reset()
	require.NoError(t, r.WriteJSON(&out))
	assert.Contains(t, out.String(), `"interrupted": true`)
}

func TestCPUPerCallRoughMark(t *testing.T) {
	cpu := func(s float64) *float64 { return &s }
	tests := []struct {
		name string
		t    TargetResult
		want string
	}{
		{name: "not measured", t: TargetResult{Calls: 10}, want: "-"},
		{name: "no calls", t: TargetResult{ProxyCPUS: cpu(1)}, want: "-"},
		{name: "precise", t: TargetResult{Calls: 1000, ProxyCPUS: cpu(0.5)}, want: "500"},
		{name: "a few ticks", t: TargetResult{Calls: 2, ProxyCPUS: cpu(0.08)}, want: "~40000"},
		{name: "errors count as calls", t: TargetResult{Calls: 500, Errors: 500, ProxyCPUS: cpu(0.2)}, want: "200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, cpuPerCall(&tt.t))
		})
	}
}

func TestJournalLatencyLine(t *testing.T) {
	waited := func(p50 time.Duration) *capture.SyncStats {
		return &capture.SyncStats{Lines: 10, WaitedFlushes: 10, WaitedFlushP50: p50}
	}
	cell := func(conc int, journalP50 float64, syncs *capture.SyncStats) Cell {
		return Cell{Workload: "small", Concurrency: conc,
			Direct:  TargetResult{Calls: 100, P50MS: 0.02},
			Plain:   TargetResult{Calls: 100, P50MS: 0.22},
			Journal: &TargetResult{Calls: 100, P50MS: journalP50, Syncs: syncs}}
	}
	probe := FsyncStats{P50MS: 0.15, IdleGapMS: 1, IdleP50MS: 0.25}
	tests := []struct {
		name  string
		cell  Cell
		probe FsyncStats
		want  string // "" = no line
	}{
		{name: "met with every fsync", cell: cell(1, 0.50, waited(200*time.Microsecond)), probe: probe,
			want: "c=1 small: journal added p50 +0.480 ms against plain's +0.200 + one fsync + 0.15; with the probe's back-to-back fsync (0.150 ms) limit 0.500 ms: met, 0.020 ms to spare; with its fsync after 1 ms idle (0.250 ms) limit 0.600 ms: met, 0.120 ms to spare; with the flush its calls waited on (0.200 ms) limit 0.550 ms: met, 0.070 ms to spare"},
		{name: "over back to back, met after idle and with the waited flush", cell: cell(1, 0.60, waited(300*time.Microsecond)), probe: probe,
			want: "c=1 small: journal added p50 +0.580 ms against plain's +0.200 + one fsync + 0.15; with the probe's back-to-back fsync (0.150 ms) limit 0.500 ms: OVER by 0.080 ms; with its fsync after 1 ms idle (0.250 ms) limit 0.600 ms: met, 0.020 ms to spare; with the flush its calls waited on (0.300 ms) limit 0.650 ms: met, 0.070 ms to spare"},
		{name: "no idle probe, no waited flushes reported", cell: cell(1, 0.60, &capture.SyncStats{Lines: 10}), probe: FsyncStats{P50MS: 0.15},
			want: "c=1 small: journal added p50 +0.580 ms against plain's +0.200 + one fsync + 0.15; with the probe's back-to-back fsync (0.150 ms) limit 0.500 ms: OVER by 0.080 ms"},
		{name: "not concurrency 1", cell: cell(32, 0.5, waited(time.Millisecond)), probe: probe},
		{name: "no journal row", cell: Cell{Concurrency: 1, Plain: TargetResult{Calls: 1}}, probe: probe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, ok := tt.cell.journalLatencyLine(tt.probe)
			assert.Equal(t, tt.want != "", ok)
			assert.Equal(t, tt.want, line)
		})
	}
	r := &Report{Fsync: FsyncStats{P50MS: 0.15}, Cells: []Cell{cell(1, 0.5, waited(200*time.Microsecond))}}
	r.Cells[0].Verify = Verification{Records: 1, Calls: 1}
	r.setHeadline()
	var out bytes.Buffer
	require.NoError(t, r.WriteText(&out))
	assert.Contains(t, out.String(), "\nc=1 small: journal added p50 +0.480 ms", "the report prints the line")
	assert.Regexp(t, `\+0\.480 .* 0\.200\n`, out.String(), "the journal row's flush p50 column")
}
