package demo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
)

func TestSummaryTable(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	f64 := func(f float64) *float64 { return &f }
	rs := []Rollout{
		{ID: "0-0", Reward: 1, Capture: CaptureSummary{Calls: 2, Dialects: []string{"responses"}, Metrics: capture.Metrics{
			TokensIn: i64(100), TokensOut: i64(40), TokensReasoning: i64(12), TokensTotal: i64(140), CachedTokens: i64(8),
			LatencyTotalMS: f64(12.34), NumCalls: 2,
		}}},
		{ID: "0-1", Reward: 0, Capture: CaptureSummary{Calls: 1, Dialects: []string{"messages", "chat"}, Errors: 1, Metrics: capture.Metrics{
			TokensIn: i64(7), TokensOut: i64(3), CachedTokens: i64(0), LatencyTotalMS: f64(0.1), NumCalls: 1,
		}}},
		{ID: "1-0", Reward: 1}, // no capture at all
	}
	got := summaryTable(rs).String()
	want := strings.Join([]string{
		"ROLLOUT  CALLS  DIALECTS       TOKENS IN  OUT  REASONING  CACHED  LATENCY MS  ERRORS     REWARD",
		"0-0          2  responses            100   40         12       8        12.3       0        1.0",
		"0-1          1  messages,chat          7    3          -       0         0.1       1        0.0",
		"1-0          0                         -    -          -       -           -       0        1.0",
		"total        3                       107   43         12       8        12.4       1  mean 0.67",
		"",
	}, "\n")
	assert.Equal(t, want, got)
}

func TestSummaryTableOneRolloutHasNoTotal(t *testing.T) {
	got := summaryTable([]Rollout{{ID: "0-0", Capture: CaptureSummary{Calls: 1}}}).String()
	assert.NotContains(t, got, "total")
	assert.Equal(t, 2, strings.Count(got, "\n"))
}

func TestPrintReportNotesCaptureProblems(t *testing.T) {
	res := &Result{
		CaptureDir: "/tmp/with space/captures", RolloutsPath: "/r.jsonl", AttachedPath: "/a.jsonl",
		Rollouts: []Rollout{{ID: "3-1", Calls: make([]Call, 2), Capture: CaptureSummary{Calls: 1, Invalid: 1, Incomplete: true}}},
	}
	var b strings.Builder
	require.NoError(t, printReport(&b, res))
	s := b.String()
	assert.Contains(t, s, "rollout 3-1: 1 damaged capture line(s) skipped")
	assert.Contains(t, s, "rollout 3-1: capture marked incomplete")
	assert.Contains(t, s, "rollout 3-1: the agent made 2 call(s), the capture holds 1")
	assert.Contains(t, s, "gymtrace calls --capture-dir '/tmp/with space/captures' 3-1")
}
