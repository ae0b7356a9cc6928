package report

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-analyze/charts"
)

// Chart sizes in SVG user units (the SVG scales to its container).
const (
	chartWidth  = 640
	chartHeight = 320
	// maxTokenBars is how many rollouts the tokens chart shows (those with the most tokens).
	maxTokenBars = 40
	// targetBins is about how many bars a histogram or the calls-over-time chart has.
	targetBins = 12
)

// chart is one rendered chart of the HTML report.
type chart struct {
	ID    string        // element id, e.g. "chart-tokens"
	Title string        // caption
	Note  string        // what the chart shows or why it is empty
	SVG   template.HTML // the inline SVG; empty when there is nothing to draw
	Err   string        // the charting library's error, if it failed (the report is still written)
}

// buildCharts renders the report's charts.
func buildCharts(rep *Report) []chart {
	return []chart{
		tokensChart(rep),
		histogramChart(rep, "chart-latency", "Latency per call",
			"calls by total latency (start of the call to the end of the response body)",
			func(c *Call) *float64 { return c.LatencyTotalMS }),
		histogramChart(rep, "chart-ttft", "Time to first token", "calls by time to the first response bytes",
			func(c *Call) *float64 { return c.LatencyTTFTMS }),
		errorsChart(rep),
		timelineChart(rep),
	}
}

// tokensChart: input and output tokens per rollout, stacked, for the rollouts with the most tokens.
func tokensChart(rep *Report) chart {
	c := chart{ID: "chart-tokens", Title: "Tokens per rollout"}
	type row struct {
		id      string
		in, out float64
	}
	var rows []row
	for i := range rep.Rollouts {
		m := rep.Rollouts[i].Metrics
		r := row{id: rep.Rollouts[i].ID, in: float(m.TokensIn), out: float(m.TokensOut)}
		if r.in+r.out > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		c.Note = "no call reported token usage"
		return c
	}
	c.Note = "input and output tokens of each rollout (input includes cached tokens)"
	if len(rows) > maxTokenBars {
		slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(b.in+b.out, a.in+a.out) })
		c.Note = fmt.Sprintf("the %d of %d rollouts with the most tokens; input includes cached tokens", maxTokenBars, len(rows))
		rows = rows[:maxTokenBars]
	}
	labels := make([]string, len(rows))
	in := make([]float64, len(rows))
	out := make([]float64, len(rows))
	for i, r := range rows {
		labels[i], in[i], out[i] = tailTrim(r.id, 14), r.in, r.out
	}
	c.SVG, c.Err = barSVG(bars{series: [][]float64{in, out}, names: []string{"input", "output"}, labels: labels,
		colors: []charts.Color{colorBlue, colorTeal}, stack: true})
	return c
}

// histogramChart: histogram of one value of every call.
func histogramChart(rep *Report, id, title, note string, value func(*Call) *float64) chart {
	c := chart{ID: id, Title: title, Note: note}
	var vals []float64
	for i := range rep.Rollouts {
		for j := range rep.Rollouts[i].Calls {
			if v := value(&rep.Rollouts[i].Calls[j]); v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
				vals = append(vals, max(*v, 0))
			}
		}
	}
	if len(vals) == 0 {
		c.Note = "no call has this value"
		return c
	}
	h := Histogram(vals, targetBins)
	labels, digits := binLabels(h, "")
	counts := make([]float64, len(h.Counts))
	for i, n := range h.Counts {
		counts[i] = float64(n)
	}
	c.Note = fmt.Sprintf("%s; each bar counts the calls from its label up to the next (%s wide)", note, formatDurationDigits(h.Width, digits))
	c.SVG, c.Err = barSVG(bars{series: [][]float64{counts}, names: []string{"calls"}, labels: labels, colors: []charts.Color{colorBlue}})
	return c
}

// errorsChart: calls per error category (and the calls without one).
func errorsChart(rep *Report) chart {
	c := chart{ID: "chart-errors", Title: "Error categories"}
	t := &rep.Totals
	if t.Calls == 0 {
		c.Note = "no calls"
		return c
	}
	labels := []string{"ok"}
	vals := []float64{float64(t.Calls - t.FailedCalls)}
	for _, e := range t.Errors {
		labels = append(labels, e.Category)
		vals = append(vals, float64(e.Count))
	}
	c.Note = fmt.Sprintf("calls by error_category: %d of %d failed", t.FailedCalls, t.Calls)
	slices.Reverse(labels) // a horizontal chart draws its first category at the bottom: "ok" goes on top
	slices.Reverse(vals)
	c.SVG, c.Err = barSVG(bars{series: [][]float64{vals}, names: []string{"calls"}, labels: labels, colors: []charts.Color{colorBlue}, horizontal: true})
	return c
}

// timelineChart: calls started per time bucket since the run's first call, ok and failed stacked.
func timelineChart(rep *Report) chart {
	c := chart{ID: "chart-timeline", Title: "Calls over time"}
	t := &rep.Totals
	if t.FirstStartedAt == nil {
		c.Note = "no call has a start time"
		return c
	}
	var starts []float64
	var failed []bool
	for i := range rep.Rollouts {
		for j := range rep.Rollouts[i].Calls {
			call := &rep.Rollouts[i].Calls[j]
			if call.StartedAt == nil || math.IsNaN(*call.StartedAt) {
				continue
			}
			starts = append(starts, (*call.StartedAt-*t.FirstStartedAt)*1000)
			failed = append(failed, call.ErrorCategory != nil)
		}
	}
	h := Histogram(starts, targetBins)
	ok := make([]float64, len(h.Counts))
	bad := make([]float64, len(h.Counts))
	for i, s := range starts {
		b := h.Bin(s)
		if failed[i] {
			bad[b]++
		} else {
			ok[b]++
		}
	}
	labels, digits := binLabels(h, "+")
	c.Note = fmt.Sprintf("calls started in each %s since the first call", formatDurationDigits(h.Width, digits))
	c.SVG, c.Err = barSVG(bars{series: [][]float64{ok, bad}, names: []string{"ok", "failed"}, labels: labels,
		colors: []charts.Color{colorBlue, colorRed}, stack: true})
	return c
}

// Series colors: blue for input / ok / calls, teal for output, red for failures.
var (
	colorBlue = charts.ColorFromHex("4c6fcf")
	colorTeal = charts.ColorFromHex("2f9e8f")
	colorRed  = charts.ColorFromHex("d1495b")
)

// bars describes one bar chart.
type bars struct {
	series     [][]float64
	names      []string // series names (a legend is drawn for more than one series)
	labels     []string // category labels
	colors     []charts.Color
	stack      bool // series stacked in one bar
	horizontal bool // categories on the vertical axis
}

// barSVG renders a bar chart as inline SVG (see svgForHTML). Counts up to 10 get integer ticks.
func barSVG(b bars) (template.HTML, string) {
	opt := charts.NewBarChartOptionWithData(b.series)
	opt.Theme = charts.GetTheme(charts.ThemeLight).WithSeriesColors(b.colors)
	opt.Padding = charts.NewBox(20, 20, 20, 10)
	opt.CategoryAxis.Labels = b.labels
	opt.Horizontal = b.horizontal
	if !b.horizontal && len(b.labels) > 8 {
		opt.CategoryAxis.LabelRotation = charts.DegreesToRadians(40)
	}
	axis := charts.ValueAxisOption{Min: charts.Ptr(0.0), ValueFormatter: compactNumber}
	if top := maxBar(b.series, b.stack); top <= 10 {
		top = max(top, 1)
		axis.Max = charts.Ptr(top)
		axis.LabelCount = int(top) + 1
		axis.PreferNiceIntervals = charts.Ptr(false)
	}
	opt.ValueAxis = []charts.ValueAxisOption{axis}
	if len(b.series) > 1 {
		opt.Legend.SeriesNames = b.names
	} else {
		opt.Legend.Show = charts.Ptr(false)
	}
	if b.stack {
		opt.StackSeries = charts.Ptr(true)
	}
	p := charts.NewPainter(charts.PainterOptions{OutputFormat: charts.ChartOutputSVG, Width: chartWidth, Height: chartHeight})
	if err := p.BarChart(opt); err != nil {
		return "", err.Error()
	}
	out, err := p.Bytes()
	if err != nil {
		return "", err.Error()
	}
	return svgForHTML(out), ""
}

// maxBar returns the tallest bar: the largest value, or the largest per-category sum when stacked
// (every series has one value per category).
func maxBar(series [][]float64, stack bool) float64 {
	top := 0.0
	for i := range series[0] {
		sum := 0.0
		for _, s := range series {
			if stack {
				sum += s[i]
			} else {
				sum = max(sum, s[i])
			}
		}
		top = max(top, sum)
	}
	return math.Ceil(top)
}

// svgForHTML prepares the library's SVG document for inline use in HTML5: the namespace declarations
// (the only URLs it holds; an inline <svg> needs none) are dropped. The library escapes every text it
// draws, so the result is trusted markup.
func svgForHTML(b []byte) template.HTML {
	s := string(b)
	s = strings.Replace(s, ` xmlns="http://www.w3.org/2000/svg"`, "", 1)
	s = strings.Replace(s, ` xmlns:xlink="http://www.w3.org/1999/xlink"`, "", 1)
	s = strings.Replace(s, "<svg ", `<svg role="img" `, 1)
	return template.HTML(s) //nolint:gosec // produced by the charting library, which escapes its text
}

// compactNumber formats an axis value: integers as such, large values as 12k / 3.4M.
func compactNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return strings.TrimSuffix(strconv.FormatFloat(v/1e6, 'f', 1, 64), ".0") + "M"
	case a >= 1e4:
		return strconv.FormatFloat(math.Round(v/1e3), 'f', 0, 64) + "k"
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func float(v *int64) float64 {
	if v == nil {
		return 0
	}
	return float64(*v)
}

// maxLabelDigits bounds the extra decimals binLabels adds to tell bins apart.
const maxLabelDigits = 3

// labelDigits is the fewest extra decimals (0 to maxLabelDigits) with which the bins' start labels
// of h are all different (narrow bins of a few milliseconds round to the same whole number).
func labelDigits(h HistogramBins) int {
	for d := 0; d < maxLabelDigits; d++ {
		seen := make(map[string]bool, len(h.Counts))
		distinct := true
		for i := range h.Counts {
			l := formatDurationDigits(h.Start+float64(i)*h.Width, d)
			if seen[l] {
				distinct = false
				break
			}
			seen[l] = true
		}
		if distinct {
			return d
		}
	}
	return maxLabelDigits
}

// binLabels are the start labels of h's bins, prefix + a duration, each different from the others,
// and the extra decimals they took (for the bin width's label).
func binLabels(h HistogramBins, prefix string) ([]string, int) {
	d := labelDigits(h)
	labels := make([]string, len(h.Counts))
	for i := range labels {
		labels[i] = prefix + formatDurationDigits(h.Start+float64(i)*h.Width, d)
	}
	return labels, d
}
