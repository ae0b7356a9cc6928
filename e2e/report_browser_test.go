package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/capturegen"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// Browser test settings.
const (
	// envRequireChromium, when "1", makes the browser test insist on Debian's chromium at
	// debianChromium (CI installs it in .ci/run); otherwise any Chromium or Chrome found by
	// envChromium or on PATH will do. Without a browser the test fails either way: it never skips.
	envRequireChromium = "GYMTRACE_REQUIRE_CHROMIUM"
	// envChromium names a Chromium binary to use instead of the one found on PATH.
	envChromium = "GYMTRACE_CHROMIUM"
	// envUpdateScreenshot, when "1", does what -update-screenshot does.
	envUpdateScreenshot = "GYMTRACE_UPDATE_SCREENSHOT"
	debianChromium      = "/usr/bin/chromium"
	screenshotPath      = "../docs/report.png"
	// defaultJaegerURL is `gymtrace report`'s --jaeger-url default, the base of each trace link.
	defaultJaegerURL = "http://127.0.0.1:16686"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write the browser tests' screenshots of the HTML report: docs/report.png and docs/traceview.png (the trace view)")

// chromiumBinary finds the browser (see envRequireChromium).
func chromiumBinary(t *testing.T) string {
	t.Helper()
	install := "install Debian's chromium (apt-get install -y chromium)"
	if os.Getenv(envRequireChromium) == "1" {
		if _, err := os.Stat(debianChromium); err != nil {
			t.Fatalf("%s=1 but %s is missing: %v; %s", envRequireChromium, debianChromium, err, install)
		}
		return debianChromium
	}
	if p := os.Getenv(envChromium); p != "" {
		return p
	}
	for _, name := range []string{debianChromium, "chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("the browser test needs Chromium and found none: %s, or set %s to a Chromium binary", install, envChromium)
	return ""
}

// runGymtrace runs the gymtrace binary with args and returns its stdout; a non-zero exit fails t.
func runGymtrace(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), gymtraceBinary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "gymtrace %s: %s", strings.Join(args, " "), stderr.String())
	return out
}

// demoRun makes a demo-like run: `gymtrace demo`'s rollouts (every dialect, streamed and not, tool
// calls), two more with failures (a rate limit, a cut stream, a 500 and an in-stream error) and one
// the rollouts file names that has no capture at all.
func demoRun(t *testing.T) (captureDir, rolloutsPath string) {
	t.Helper()
	dir := t.TempDir()
	runGymtrace(t, "demo", "--dir", dir, "--rollouts", "8")
	captureDir = filepath.Join(dir, "captures")
	_, err := capturegen.Generate(t.Context(), captureDir, []capturegen.Call{
		{RolloutID: "4-0", Dialect: fakemodel.DialectChat, Stream: true, Tools: true},
		{RolloutID: "4-0", Dialect: fakemodel.DialectChat, Fault: fakemodel.Fault{Status: 429}},
		{RolloutID: "4-0", Dialect: fakemodel.DialectChat, Stream: true, Fault: fakemodel.Fault{Cut: fakemodel.CutEnd, CutAfter: 3}},
		{RolloutID: "4-1", Dialect: fakemodel.DialectMessages, Fault: fakemodel.Fault{Status: 500}},
		{RolloutID: "4-1", Dialect: fakemodel.DialectMessages, Stream: true, Fault: fakemodel.Fault{Cut: fakemodel.CutErrorEvent, CutAfter: 2}},
	})
	require.NoError(t, err)
	rows, err := os.ReadFile(filepath.Join(dir, "rollouts.jsonl"))
	require.NoError(t, err)
	rows = append(rows, []byte(`{"_ng_task_index":4,"_ng_rollout_index":0,"reward":0.0}
{"_ng_task_index":4,"_ng_rollout_index":1,"reward":0.0}
{"_ng_task_index":5,"_ng_rollout_index":0,"reward":0.0}
`)...)
	rolloutsPath = filepath.Join(t.TempDir(), "rollouts.jsonl")
	require.NoError(t, os.WriteFile(rolloutsPath, rows, 0o600))
	return captureDir, rolloutsPath
}

// reportRow is what the browser test expects of one row of the report's rollouts table.
type reportRow struct {
	id          string
	tokensTotal *json.Number // `gymtrace metrics`' tokens_total; nil when unknown
}

// expectedRows is the report's rollouts table for a run whose captured rollouts are all named by
// the rollouts file: one row per rollout id of the file (SPEC §1.2: "<task>-<rollout>"), at its
// first row, with the tokens_total `gymtrace metrics` prints for it.
func expectedRows(t *testing.T, captureDir, rolloutsPath string) []reportRow {
	t.Helper()
	f, err := os.Open(rolloutsPath)
	require.NoError(t, err)
	defer f.Close()
	var rows []reportRow
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var row struct {
			Task    json.Number `json:"_ng_task_index"`
			Rollout json.Number `json:"_ng_rollout_index"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row), "rollouts row %s", sc.Bytes())
		id := row.Task.String() + "-" + row.Rollout.String()
		if slices.ContainsFunc(rows, func(r reportRow) bool { return r.id == id }) {
			continue
		}
		var m struct {
			TokensTotal *json.Number `json:"tokens_total"`
		}
		require.NoError(t, json.Unmarshal(runGymtrace(t, "metrics", "--capture-dir", captureDir, id), &m))
		rows = append(rows, reportRow{id: id, tokensTotal: m.TokensTotal})
	}
	require.NoError(t, sc.Err())
	return rows
}

// TestHTMLReportInBrowser opens the HTML file of the real `gymtrace report --html` in headless
// Chromium: every rollout row in report order, the charts, the trace links, sorting by tokens both
// ways, a rollout's link opening its calls, and no request leaving the file.
func TestHTMLReportInBrowser(t *testing.T) {
	bin := chromiumBinary(t)
	captureDir, rolloutsPath := demoRun(t)
	page := filepath.Join(t.TempDir(), "report.html")
	runGymtrace(t, "report", "--capture-dir", captureDir, "--rollouts", rolloutsPath, "--html", page)
	rows := expectedRows(t, captureDir, rolloutsPath)
	require.Len(t, rows, 11)

	ctx, requests := newBrowser(t, bin)

	step, cancelStep := context.WithTimeout(ctx, 60*time.Second)
	defer cancelStep()
	const rowsJS = `Array.from(document.querySelectorAll("#rollouts tbody tr.rollout")).map(r => r.dataset.rolloutId)`
	tokens := chromedp.CSS("#col-tokens")
	require.NoError(t, chromedp.Do(step,
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible(chromedp.CSS("#rollouts")),
	))
	initial, err := chromedp.Run(step, chromedp.Evaluate[[]string](rowsJS))
	require.NoError(t, err)
	svgCount, err := chromedp.Run(step, chromedp.Evaluate[int](`document.querySelectorAll("figure svg").length`))
	require.NoError(t, err)
	traceHref, err := chromedp.Run(step, chromedp.AttributeValue(chromedp.CSS("#rollouts tbody tr.rollout a.trace"), "href"))
	require.NoError(t, err)

	require.NoError(t, chromedp.Do(step, chromedp.Click(tokens)))
	desc, err := chromedp.Run(step, chromedp.Evaluate[[]string](rowsJS))
	require.NoError(t, err)
	sortState, err := chromedp.Run(step, chromedp.AttributeValue(tokens, "aria-sort"))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(step, chromedp.Click(tokens)))
	asc, err := chromedp.Run(step, chromedp.Evaluate[[]string](rowsJS))
	require.NoError(t, err)

	want := make([]string, len(rows))
	for i := range rows {
		want[i] = rows[i].id
	}
	assert.Equal(t, want, initial, "every rollout row, in report order")
	assert.Equal(t, 5, svgCount)
	assert.Equal(t, defaultJaegerURL+"/trace/"+rolloutTraceID(want[0]), traceHref.Value)
	assert.Equal(t, "descending", sortState.Value)
	assert.NotEqual(t, initial, desc, "the fixture's report order is not already sorted by tokens")
	assert.Equal(t, tokenOrder(t, rows, true), desc, "sorted by tokens, most first, unknown last")
	assert.Equal(t, tokenOrder(t, rows, false), asc, "sorted by tokens, fewest first, unknown last")

	// Following a rollout's link opens its calls.
	target := desc[0]
	require.NoError(t, chromedp.Do(step, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#rollouts tr[data-rollout-id=%q] td a`, target)))))
	open, err := chromedp.Run(step, chromedp.Poll[bool](fmt.Sprintf(`document.getElementById(%q).open`, "r-"+target)))
	require.NoError(t, err)
	assert.True(t, open, "the calls of %s open", target)

	if *updateScreenshot || os.Getenv(envUpdateScreenshot) == "1" {
		require.NoError(t, chromedp.Do(step,
			chromedp.Evaluate[chromedp.Void](`document.getElementById("r-`+target+`").open = false; history.replaceState(null, "", location.pathname); window.scrollTo(0, 0)`),
			chromedp.Click(tokens), // back to most tokens first
		))
		png, err := chromedp.Run(step, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(screenshotPath, png, 0o644))
		t.Logf("wrote %s (%d bytes)", screenshotPath, len(png))
	}

	assertLocalRequests(t, requests())
}

// newBrowser starts headless Chromium (bin) for t and returns its context and a function that
// returns every URL the browser requested so far. The browser stops when t ends.
func newBrowser(t *testing.T, bin string) (context.Context, func() []string) {
	t.Helper()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	// The first Run starts the browser, which lives as long as ctx: no timeout on it (chromedp.Run).
	_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
	require.NoError(t, err)

	// Every request the page makes: only the file itself may be loaded.
	var mu sync.Mutex
	var requests []string
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}))
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(requests)
	}
}

// assertLocalRequests checks that the page loaded nothing but itself (and data: URLs).
func assertLocalRequests(t *testing.T, requests []string) {
	t.Helper()
	require.NotEmpty(t, requests, "network events are observed")
	for _, u := range requests {
		assert.True(t, strings.HasPrefix(u, "file://") || strings.HasPrefix(u, "data:"), "the report loaded %s", u)
	}
}

// tokenOrder is the rollout order the table must show when sorted by tokens_total: known values
// descending (or ascending), ties in report order, unknown values last in report order.
func tokenOrder(t *testing.T, rows []reportRow, descending bool) []string {
	t.Helper()
	type row struct {
		id    string
		pos   int
		total *int64
	}
	sorted := make([]row, len(rows))
	for i, r := range rows {
		sorted[i] = row{id: r.id, pos: i}
		if r.tokensTotal != nil {
			n, err := r.tokensTotal.Int64()
			require.NoError(t, err, "tokens_total of %s", r.id)
			sorted[i].total = &n
		}
	}
	slices.SortStableFunc(sorted, func(a, b row) int {
		switch {
		case a.total == nil && b.total == nil:
			return a.pos - b.pos
		case a.total == nil:
			return 1
		case b.total == nil:
			return -1
		case *a.total == *b.total:
			return a.pos - b.pos
		case (*a.total > *b.total) == descending:
			return -1
		}
		return 1
	})
	ids := make([]string, len(sorted))
	for i, r := range sorted {
		ids[i] = r.id
	}
	return ids
}
