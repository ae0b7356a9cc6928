package report

import (
	"bufio"
	"cmp"
	_ "embed" // the HTML report's template, stylesheet and script
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// DefaultJaegerURL is the default Jaeger UI of [WriteHTML]: a local one.
const DefaultJaegerURL = "http://127.0.0.1:16686"

var (
	//go:embed assets/report.html.tmpl
	htmlTemplateText string
	//go:embed assets/report.css
	htmlCSS string
	//go:embed assets/report.js
	htmlJS string
	//go:embed assets/trace.js
	traceJS string
)

// htmlTemplate is parsed once; executing it is safe for concurrent use.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"plural": plural,
	"int":    fmtInt,
	"ms":     fmtMS,
	"key": func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	},
	"fkey": func(v *float64) string {
		if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
			return ""
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	},
	"str":      strOrDash,
	"status":   fmtStatus,
	"time":     fmtTime,
	"bytes":    humanBytes,
	"dur":      formatDuration,
	"maxSpans": func() int { return MaxTraceSpans },
}).Parse(htmlTemplateText))

// htmlData is what the template sees.
type htmlData struct {
	JaegerURL string
	Rep       *Report
	Charts    []chart
	CSS       template.CSS
	JS        template.JS
}

// TraceURL is the link to the Jaeger trace of a rollout.
func (d *htmlData) TraceURL(traceID string) string { return d.JaegerURL + "/trace/" + traceID }

// CheckJaegerURL validates a Jaeger UI base URL (an absolute http or https URL without user info,
// query or fragment) and returns it without a trailing "/". The error names the value and the rule.
func CheckJaegerURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("jaeger url %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("jaeger url %q: want an absolute http or https URL without user info, query or fragment, e.g. %s", raw, DefaultJaegerURL)
	}
	return strings.TrimSuffix(raw, "/"), nil
}

// WriteHTML writes rep as one self-contained HTML document to w (see the package doc): the health
// findings, the run totals, the charts as inline SVG, the sortable rollout table with a link per
// rollout to <jaegerURL>/trace/<trace id> ("" means DefaultJaegerURL; see CheckJaegerURL), and each
// rollout's calls with their payloads (when rep was built with Options.PayloadBytes) in collapsed
// <details> elements. Every value from the captures is HTML-escaped, and the control characters
// HTML does not allow become '?' (htmlControls). Errors: an invalid jaegerURL
// (before anything is written) or w failing.
func WriteHTML(w io.Writer, rep *Report, jaegerURL string) error {
	if rep == nil {
		return errors.New("report html: nil report")
	}
	jaeger, err := CheckJaegerURL(cmp.Or(jaegerURL, DefaultJaegerURL))
	if err != nil {
		return fmt.Errorf("report html: %w", err)
	}
	d := htmlData{
		JaegerURL: jaeger,
		Rep:       rep,
		Charts:    buildCharts(rep),
		CSS:       template.CSS(htmlCSS),                //nolint:gosec // our own embedded stylesheet
		JS:        template.JS(htmlJS + "\n" + traceJS), //nolint:gosec // our own embedded scripts
	}
	hc := &htmlControls{w: w}
	bw := bufio.NewWriterSize(hc, 64<<10)
	if err := htmlTemplate.Execute(bw, &d); err != nil {
		return fmt.Errorf("report html: %w", err)
	}
	if err := errors.Join(bw.Flush(), hc.Close()); err != nil {
		return fmt.Errorf("report html: %w", err)
	}
	return nil
}

// strOrDash returns *s, or [dash] for nil (HTML escaping is the template's).
func strOrDash(s *string) string {
	if s == nil {
		return dash
	}
	return *s
}

// humanBytes formats a size in bytes: "812 B", "12.3 KiB", "4.0 MiB".
func humanBytes(n int) string {
	switch {
	case n < 1024:
		return strconv.Itoa(n) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}
