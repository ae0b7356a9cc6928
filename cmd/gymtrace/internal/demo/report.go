package demo

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/report"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/texttable"
	"github.com/gymtrace/gymtrace/ojson"
)

// printReport writes the end of the demo's output: the files, the per-rollout table computed from
// the capture files, capture problems if any, and the commands to look further.
func printReport(w io.Writer, res *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nfiles\n")
	fmt.Fprintf(&b, "  captures           %s  (<rollout_id>.capture.jsonl and .observations.jsonl per rollout)\n", res.CaptureDir)
	fmt.Fprintf(&b, "  rollouts           %s\n", res.RolloutsPath)
	fmt.Fprintf(&b, "  attached rollouts  %s  (ng_model_call_capture and ng_agent_observations on every line)\n\n", res.AttachedPath)

	b.WriteString(summaryTable(res.Rollouts).String())

	fmt.Fprintf(&b, "\nagent observations (ng_agent_observations after attach: the agent's spans joined with the captured calls)\n")
	b.WriteString(observationsTable(res.Rollouts).String())
	if problems := observationProblems(res.Rollouts); len(problems) > 0 {
		fmt.Fprintf(&b, "\nobservation problems:\n")
		for _, p := range problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	} else if len(res.Rollouts) > 0 {
		fmt.Fprintf(&b, "every model-call reference resolved to a captured call's model_call_id; no ownership or reference gaps\n")
	}

	var notes []string
	for _, r := range res.Rollouts {
		if r.Capture.Invalid > 0 {
			notes = append(notes, fmt.Sprintf("rollout %s: %d damaged capture line(s) skipped", r.ID, r.Capture.Invalid))
		}
		if r.Capture.Incomplete {
			notes = append(notes, fmt.Sprintf("rollout %s: capture marked incomplete (a record could not be written)", r.ID))
		}
		if r.Capture.Calls != len(r.Calls) {
			notes = append(notes, fmt.Sprintf("rollout %s: the agent made %d call(s), the capture holds %d", r.ID, len(r.Calls), r.Capture.Calls))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "\ncapture problems:\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}

	if len(res.Rollouts) > 0 {
		id := res.Rollouts[0].ID
		dir := report.ShellQuote(res.CaptureDir)
		fmt.Fprintf(&b, "\nlook further (from a source checkout, `go run ./cmd/gymtrace` in place of `gymtrace`):\n")
		fmt.Fprintf(&b, "  gymtrace calls --capture-dir %s %s      # one ModelCallRecord per call\n", dir, id)
		fmt.Fprintf(&b, "  gymtrace metrics --capture-dir %s %s    # the rollout's token and latency totals\n", dir, id)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// table is a text table: a header, rows of cells, and the right-aligned columns (from 1).
type table struct {
	header []string
	rows   [][]string
	right  []int
}

func (t table) String() string { return texttable.Strings(t.header, t.rows, t.right...) }

// summaryTable is the per-rollout summary table, with a total row when there is more than one
// rollout.
func summaryTable(rs []Rollout) table {
	t := table{
		header: []string{"ROLLOUT", "CALLS", "DIALECTS", "TOKENS IN", "OUT", "REASONING", "CACHED", "LATENCY MS", "ERRORS", "REWARD"},
		right:  []int{2, 4, 5, 6, 7, 8, 9, 10},
	}
	var recs int
	var errs int
	var reward float64
	var total []capture.ModelCallRecord // one pseudo-record per rollout, to sum with Aggregate's rules
	for _, r := range rs {
		m := r.Capture.Metrics
		t.rows = append(t.rows, []string{
			r.ID, strconv.Itoa(r.Capture.Calls), strings.Join(r.Capture.Dialects, ","),
			optInt(m.TokensIn), optInt(m.TokensOut), optInt(m.TokensReasoning), optInt(m.CachedTokens),
			optFloat(m.LatencyTotalMS, 1), strconv.Itoa(r.Capture.Errors), string(ojson.AppendFloat(nil, r.Reward)),
		})
		recs += r.Capture.Calls
		errs += r.Capture.Errors
		reward += r.Reward
		total = append(total, capture.ModelCallRecord{
			TokensIn: m.TokensIn, TokensOut: m.TokensOut, TokensReasoning: m.TokensReasoning,
			CachedTokens: m.CachedTokens, LatencyTotalMS: m.LatencyTotalMS,
		})
	}
	if len(rs) > 1 {
		m := capture.Aggregate(total)
		t.rows = append(t.rows, []string{
			"total", strconv.Itoa(recs), "", optInt(m.TokensIn), optInt(m.TokensOut), optInt(m.TokensReasoning),
			optInt(m.CachedTokens), optFloat(m.LatencyTotalMS, 1), strconv.Itoa(errs),
			"mean " + strconv.FormatFloat(reward/float64(len(rs)), 'f', 2, 64),
		})
	}
	return t
}

// observationsTable is the per-rollout table of the attached ng_agent_observations.
func observationsTable(rs []Rollout) table {
	t := table{
		header: []string{"ROLLOUT", "INVOCATIONS", "TOOL CALLS", "TOOL MS", "SANDBOXES", "SANDBOX CPU S", "PEAK MIB",
			"COMPACTIONS", "REFS", "RESOLVED", "GAPS"},
		right: []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
	}
	for _, r := range rs {
		o := r.Observations
		if !o.Attached {
			t.rows = append(t.rows, []string{r.ID, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"})
			continue
		}
		t.rows = append(t.rows, []string{
			r.ID, strconv.Itoa(o.Invocations), strconv.Itoa(o.ToolCalls), strconv.FormatFloat(o.ToolMS, 'f', 1, 64),
			strconv.Itoa(o.Sandboxes), strconv.FormatFloat(o.SandboxCPUS, 'f', 3, 64), optFloat(o.PeakMemoryMiB, 2),
			strconv.Itoa(o.Compactions), strconv.Itoa(o.References), strconv.Itoa(o.Resolved), strconv.Itoa(len(o.Gaps)),
		})
	}
	return t
}

// observationProblems lists what keeps the attached observations from being complete: a line
// without ng_agent_observations, references that did not resolve to a captured call, gaps.
func observationProblems(rs []Rollout) []string {
	var out []string
	for _, r := range rs {
		o := r.Observations
		switch {
		case !o.Attached:
			out = append(out, fmt.Sprintf("rollout %s: no ng_agent_observations after attach", r.ID))
			continue
		case o.Resolved < o.References:
			out = append(out, fmt.Sprintf("rollout %s: %d of %d model-call reference(s) not resolved to a captured call", r.ID, o.References-o.Resolved, o.References))
		}
		for _, g := range o.Gaps {
			out = append(out, fmt.Sprintf("rollout %s: gap %s", r.ID, g))
		}
	}
	return out
}

// optInt formats a nullable count, "-" for null.
func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

// optFloat formats a nullable number with prec decimals, "-" for null.
func optFloat(p *float64, prec int) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', prec, 64)
}
