package report

import (
	"io"
	"strconv"

	"github.com/jedib0t/go-pretty/v6/table"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/texttable"
)

// Column bounds of the calls table, in runes.
const (
	maxModelWidth  = 16
	maxFinishWidth = 10
)

// WriteCallsTable writes one rollout's call records as an aligned terminal table (what `gymtrace
// calls` prints when its output is a terminal): IDX (call_index), MODEL, DIALECT, HTTP (status), IN,
// OUT, REASON and CACHED (tokens), LATENCY, TTFT, FINISH (finish_reason) and ERROR (error_category);
// unknown values are "-". Long models keep their start ("…" marks the cut). No payloads are shown.
// The output has no color and no trailing spaces; only w's error is returned.
func WriteCallsTable(w io.Writer, records []capture.ModelCallRecord) error {
	t := texttable.New(true, 1, 4, 5, 6, 7, 8, 9, 10)
	t.AppendHeader(table.Row{"IDX", "MODEL", "DIALECT", "HTTP", "IN", "OUT", "REASON", "CACHED", "LATENCY", "TTFT", "FINISH", "ERROR"})
	for i := range records {
		r := &records[i]
		t.AppendRow(table.Row{
			strconv.Itoa(r.CallIndex), headTrim(strOr(r.Model), maxModelWidth), strOr(r.Dialect), fmtStatus(r.StatusCode),
			fmtInt(r.TokensIn), fmtInt(r.TokensOut), fmtInt(r.TokensReasoning), fmtInt(r.CachedTokens),
			fmtMS(r.LatencyTotalMS), fmtMS(r.LatencyTTFTMS), headTrim(strOr(r.FinishReason), maxFinishWidth), strOr(r.ErrorCategory),
		})
	}
	_, err := io.WriteString(w, texttable.Render(t))
	return err
}

// strOr returns *s, or [dash] for nil.
func strOr(s *string) string {
	if s == nil {
		return dash
	}
	return clean(*s)
}

// headTrim keeps the start of s within max runes, marking the cut with a trailing "…".
func headTrim(s string, max int) string {
	r := []rune(s)
	if max < 2 || len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}
