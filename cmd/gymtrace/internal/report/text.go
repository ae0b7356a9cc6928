package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/texttable"
)

// Bounds of the terminal report, in runes: with them a report fits in 100 columns for token counts
// of up to seven digits.
const (
	textWidth       = 100
	maxIDWidth      = 16
	maxProblemWidth = 24
)

// WriteText writes the terminal report to w: the health findings first (or a line saying there are
// none), then one table row per rollout — ROLLOUT, CALLS, TOK IN, TOK OUT, REASON (reasoning tokens),
// CACHED, LATENCY (total), TTFT P50 and ERRORS / HEALTH (one line per error category with its count
// of calls, then one line per health flag, e.g. "incomplete") — a TOTAL row, and the run's totals.
// Unknown values are "-". Columns are aligned (numbers right), long ids keep their end ("…" marks
// the cut) and text wraps at word boundaries, so the report reads in 100 columns. The output is
// plain text without color, control characters or trailing spaces. Only w's error is returned.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	writeFindings(&b, rep)
	b.WriteByte('\n')
	if len(rep.Rollouts) > 0 {
		b.WriteString(rolloutTable(rep))
		b.WriteString("\n")
	}
	writeTotals(&b, rep)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFindings writes the health section.
func writeFindings(b *strings.Builder, rep *Report) {
	if len(rep.Findings) == 0 {
		b.WriteString("health: ok: every rollout has readable captured calls and not all of them failed\n")
	} else {
		fmt.Fprintf(b, "health: %d finding%s\n", len(rep.Findings), plural(len(rep.Findings)))
	}
	for _, f := range rep.Findings {
		writeWrapped(b, "  ! ", "    ", clean(f.Message))
	}
	if rep.RolloutsName == "" {
		b.WriteString("  (rollouts without any capture file show only with --rollouts OUT.jsonl)\n")
	}
}

// rolloutTable renders the per-rollout table with its TOTAL row.
func rolloutTable(rep *Report) string {
	t := texttable.New(true, 2, 3, 4, 5, 6, 7, 8)
	t.AppendHeader(table.Row{"ROLLOUT", "CALLS", "TOK IN", "TOK OUT", "REASON", "CACHED", "LATENCY", "TTFT P50", "ERRORS / HEALTH"})
	row := func(first, calls string, m capture.Metrics, ttft *float64, last string) table.Row {
		return table.Row{first, calls, fmtInt(m.TokensIn), fmtInt(m.TokensOut), fmtInt(m.TokensReasoning),
			fmtInt(m.CachedTokens), fmtMS(m.LatencyTotalMS), fmtMS(ttft), last}
	}
	for i := range rep.Rollouts {
		r := &rep.Rollouts[i]
		t.AppendRow(row(tailTrim(r.ID, maxIDWidth), strconv.Itoa(len(r.Calls)), r.Metrics, r.TTFTP50MS, problemsCell(r)))
	}
	tot := &rep.Totals
	failed := strconv.Itoa(tot.FailedCalls) + " failed"
	t.AppendFooter(row("TOTAL", strconv.Itoa(tot.Calls), tot.Metrics, tot.TTFTP50MS, failed))
	return texttable.Render(t)
}

// writeTotals writes the run summary lines.
func writeTotals(b *strings.Builder, rep *Report) {
	tot := &rep.Totals
	fmt.Fprintf(b, "run: %d rollout%s (%d with calls), %d call%s", tot.Rollouts, plural(tot.Rollouts), tot.RolloutsWithCalls, tot.Calls, plural(tot.Calls))
	if tot.FailedCalls > 0 {
		fmt.Fprintf(b, ", %d failed", tot.FailedCalls)
	} else {
		b.WriteString(", none failed")
	}
	if tot.DamagedLines > 0 {
		fmt.Fprintf(b, ", %d damaged line%s", tot.DamagedLines, plural(tot.DamagedLines))
	}
	b.WriteByte('\n')
	if len(tot.Errors) > 0 {
		writeWrapped(b, "errors: ", "  ", clean(categoryList(tot.Errors)))
	}
	m := tot.Metrics
	fmt.Fprintf(b, "tokens: in %s, out %s, reasoning %s, cached %s, total %s\n",
		fmtInt(m.TokensIn), fmtInt(m.TokensOut), fmtInt(m.TokensReasoning), fmtInt(m.CachedTokens), fmtInt(m.TokensTotal))
	fmt.Fprintf(b, "latency per call: p50 %s, p95 %s; time to first token: p50 %s, p95 %s\n",
		fmtMS(tot.LatencyP50MS), fmtMS(tot.LatencyP95MS), fmtMS(tot.TTFTP50MS), fmtMS(tot.TTFTP95MS))
	if tot.FirstStartedAt != nil && tot.LastCompletedAt != nil {
		span := (*tot.LastCompletedAt - *tot.FirstStartedAt) * 1000
		fmt.Fprintf(b, "wall clock: %s from the first call's start to the last call's end\n", formatDuration(span))
	}
}

// problemsCell is a rollout's ERRORS / HEALTH cell: one line per error category ("2 rate_limit"),
// then one per health flag.
func problemsCell(r *Rollout) string {
	var lines []string
	for _, c := range r.Errors {
		lines = append(lines, headTrim(clean(fmt.Sprintf("%d %s", c.Count, c.Category)), maxProblemWidth))
	}
	for _, f := range r.Flags {
		if f == FindingDamagedLines {
			lines = append(lines, fmt.Sprintf("%d damaged line%s", r.DamagedLines, plural(r.DamagedLines)))
			continue
		}
		lines = append(lines, f.Short())
	}
	return strings.Join(lines, "\n")
}

// writeWrapped writes s after first, wrapped at word boundaries to textWidth runes, continuation
// lines starting with indent.
func writeWrapped(b *strings.Builder, first, indent, s string) {
	w := textWidth - utf8.RuneCountInString(indent)
	for i, l := range strings.Split(text.WrapSoft(s, w), "\n") {
		if i > 0 {
			first = indent
		}
		b.WriteString(first + strings.TrimRight(l, " ") + "\n")
	}
}
