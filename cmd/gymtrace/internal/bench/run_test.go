package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ratioLineRE is the exact form of a report's last line.
var ratioLineRE = regexp.MustCompile(`^capture/plain throughput ratio: \d+\.\d\d$`)

// shortStream is the sse200 workload cut to 8 events 2 ms apart (role, 4 deltas, finish, usage,
// [DONE]), so that a stream run takes milliseconds per call.
func shortStream() *Workload {
	w := sse200Workload()
	n := len(w.Events)
	w.Events = append(w.Events[:5:5], w.Events[n-3:]...)
	w.Gap = 2 * time.Millisecond
	return w
}

// TestRunShort runs the whole bench briefly against the test binary's proxies and checks the
// report's structure and that every derived number comes from the measured ones.
func TestRunShort(t *testing.T) {
	tests := []struct {
		name     string
		workload *Workload
	}{
		{"small", smallWorkload()},
		{"stream", shortStream()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			var progress bytes.Buffer
			rep, err := Run(t.Context(), Config{
				Workloads: []*Workload{tc.workload}, Concurrency: []int{2}, Duration: time.Second,
				Command: testCommand, TempDir: tmp, Progress: &progress,
			})
			require.NoError(t, err)
			require.NoError(t, rep.Check())

			entries, err := os.ReadDir(tmp)
			require.NoError(t, err)
			assert.Empty(t, entries, "the run's temporary directory is removed")
			assert.Equal(t, numTargets, strings.Count(progress.String(), "\n"), "one progress line per target: %s", progress.String())

			assert.Equal(t, 1.0, rep.DurationS)
			assert.Positive(t, rep.WallS)
			assert.Equal(t, fsyncSamples, rep.Fsync.Samples)
			assert.Positive(t, rep.Fsync.P50MS)
			assert.LessOrEqual(t, rep.Fsync.P50MS, rep.Fsync.P99MS)
			assert.InDelta(t, 1.0, rep.Fsync.IdleGapMS, 1e-9)
			assert.Positive(t, rep.Fsync.IdleP50MS)
			assert.LessOrEqual(t, rep.Fsync.IdleP50MS, rep.Fsync.IdleP99MS)
			require.Len(t, rep.Workloads, 1)
			assert.Equal(t, tc.workload.ResponseBytes(), rep.Workloads[0].ResponseBytes)
			assert.InDelta(t, 1.0/numTargets, rep.Workloads[0].BudgetS, 1e-9, "one workload, one level, four targets")

			require.Len(t, rep.Cells, 1)
			c := rep.Cells[0]
			assert.Equal(t, tc.workload.Name, c.Workload)
			assert.Equal(t, 2, c.Concurrency)
			require.NotNil(t, c.Journal)
			assert.Equal(t, TargetJournal, c.Journal.Target)
			for _, tr := range []TargetResult{c.Direct, c.Plain, c.Capture, *c.Journal} {
				assert.Positive(t, tr.Calls, tr.Target)
				assert.Zero(t, tr.Errors, tr.Target)
				assert.GreaterOrEqual(t, tr.Throughput, float64(tr.Calls)/tr.ElapsedS*(1-1e-9), "%s: per-worker rates add up to at least the aggregate", tr.Target)
				assert.LessOrEqual(t, tr.Throughput, float64(tr.Calls)/c.BudgetS, "%s: every worker calls until the budget is spent", tr.Target)
				assert.Positive(t, tr.P50MS, tr.Target)
				assert.LessOrEqual(t, tr.P50MS, tr.P99MS, tr.Target)
				assert.Equal(t, tc.workload.Stream(), tr.TTFBP50MS != nil, "%s: TTFB reported for streams only", tr.Target)
				if tr.TTFBP50MS != nil {
					assert.LessOrEqual(t, *tr.TTFBP50MS, tr.P50MS, tr.Target)
					assert.LessOrEqual(t, *tr.TTFBP50MS, *tr.TTFBP99MS, tr.Target)
				}
			}
			assert.Equal(t, TargetDirect, c.Direct.Target)
			assert.Nil(t, c.Direct.ProxyCPUS, "the direct target has no proxy")
			assert.Nil(t, c.Direct.ProxyPeakRSSBytes)
			for _, tr := range []TargetResult{c.Plain, c.Capture, *c.Journal} {
				require.NotNil(t, tr.ProxyCPUS, tr.Target)
				assert.GreaterOrEqual(t, *tr.ProxyCPUS, 0.0, tr.Target)
				require.NotNil(t, tr.ProxyPeakRSSBytes, tr.Target)
				assert.Greater(t, *tr.ProxyPeakRSSBytes, int64(1<<20), tr.Target)
			}

			assert.Equal(t, c.Capture.Throughput/c.Plain.Throughput, c.CapturePlainRatio)
			assert.Equal(t, c.Journal.Throughput/c.Plain.Throughput, c.JournalPlainRatio)
			assert.Equal(t, c.JournalPlainRatio, rep.JournalPlainRatio)
			assert.Equal(t, c.Capture.Throughput/c.Direct.Throughput, c.CaptureDirectRatio)
			assert.Equal(t, c.Capture.P50MS-c.Direct.P50MS, c.AddedP50MS)
			assert.Equal(t, c.Capture.P99MS-c.Direct.P99MS, c.AddedP99MS)
			if tc.workload.Stream() {
				require.NotNil(t, c.TTFBOverPlainP50MS)
				assert.Equal(t, *c.Capture.TTFBP50MS-*c.Plain.TTFBP50MS, *c.TTFBOverPlainP50MS)
			} else {
				assert.Nil(t, c.TTFBOverPlainP50MS)
			}

			warmup := 2
			if tc.workload.Stream() {
				warmup = 0
			}
			assert.True(t, c.Verify.OK(), "%+v", c.Verify)
			assert.Equal(t, c.Capture.Calls+warmup, c.Verify.Calls, "measured calls plus one warm-up call per worker for JSON")
			assert.Equal(t, c.Verify.Calls, c.Verify.Records)
			require.NotNil(t, c.JournalVerify)
			assert.True(t, c.JournalVerify.OK(), "%+v", *c.JournalVerify)
			assert.Equal(t, c.Journal.Calls+warmup, c.JournalVerify.Calls)

			assert.Equal(t, c.CapturePlainRatio, rep.CapturePlainRatio)
			assert.Equal(t, tc.workload.Name+" c=2", rep.HeadlineCell)

			var text bytes.Buffer
			require.NoError(t, rep.WriteText(&text))
			lines := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			assert.Regexp(t, ratioLineRE, last)
			assert.Equal(t, rep.RatioLine(), last)
			assert.Equal(t, 1, strings.Count(text.String(), "capture/plain throughput ratio"), "exactly one ratio line")
			assert.Equal(t, fmt.Sprintf("capture-journal/plain throughput ratio: %.2f", rep.JournalPlainRatio), lines[len(lines)-2])
			assert.Contains(t, text.String(), "was not run: the ratio below is "+tc.workload.Name+" c=2's")
			for _, l := range lines {
				assert.Equal(t, strings.TrimRight(l, " "), l, "no trailing spaces")
			}

			var js bytes.Buffer
			require.NoError(t, rep.WriteJSON(&js))
			var back Report
			require.NoError(t, json.Unmarshal(js.Bytes(), &back))
			assert.Equal(t, *rep, back, "the JSON report round-trips")
		})
	}
}

// TestRunShortTokens runs the token workloads briefly (a short stream) against the test binary's
// proxies with --token-source vllm: every answered call has its capture record and its token
// entry, the client got as many bytes as vLLM sends for its own request (the load generator checks
// the length; the answer id, which the fake derives from every request member, differs), and the
// report gives the ratios and TTFB like the other workloads.
func TestRunShortTokens(t *testing.T) {
	tmp := t.TempDir()
	rep, err := Run(t.Context(), Config{
		Workloads: []*Workload{tokensSmallWorkload(), tokenStreamWorkload(6, 2*time.Millisecond)}, Concurrency: []int{2},
		Duration: 2 * time.Second, Command: testCommand, TempDir: tmp,
	})
	require.NoError(t, err)
	require.NoError(t, rep.Check())
	require.Len(t, rep.Cells, 2)
	for _, c := range rep.Cells {
		for _, v := range []*Verification{&c.Verify, c.JournalVerify} {
			require.NotNil(t, v)
			require.NotNil(t, v.Tokens, "%s: the token captures are checked", c.Workload)
			assert.True(t, v.OK(), "%s: %+v %+v", c.Workload, *v, *v.Tokens)
			assert.Positive(t, v.Tokens.Entries)
			assert.Equal(t, v.Calls, v.Tokens.Entries, "%s: one token entry per answered call", c.Workload)
		}
		for _, tr := range []TargetResult{c.Direct, c.Plain, c.Capture, *c.Journal} {
			assert.Positive(t, tr.Calls, "%s %s", c.Workload, tr.Target)
			assert.Zero(t, tr.Errors, "%s %s: %s", c.Workload, tr.Target, tr.FirstError)
		}
		assert.Equal(t, c.Capture.Throughput/c.Plain.Throughput, c.CapturePlainRatio)
	}
	stream := rep.Cells[1]
	assert.Equal(t, WorkloadTokensSSE200, stream.Workload)
	require.NotNil(t, stream.TTFBOverPlainP50MS, "TTFB compared for the token stream")
	assert.Equal(t, *stream.Capture.TTFBP50MS-*stream.Plain.TTFBP50MS, *stream.TTFBOverPlainP50MS)

	var text bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	out := text.String()
	assert.Contains(t, out, "tokens-small c=2 ")
	assert.Regexp(t, `tokens-sse200 c=2 (\d+)/(\d+) \+ \d+ token entries \(journal \d+/\d+ \+ \d+ token entries\)`, out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	assert.Regexp(t, ratioLineRE, lines[len(lines)-1])
	assert.Contains(t, out, "(small c=32 was not run: the ratio below is tokens-small c=2's)")
}
