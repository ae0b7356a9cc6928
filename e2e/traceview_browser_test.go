package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/capturegen"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/proxy"
)

const (
	// traceRollout is the rollout of the agent run with a subagent.
	traceRollout = "7-0"
	// callsOnlyRollout has captured calls and no observations file.
	callsOnlyRollout = "7-1"
	// traceScreenshotPath is the trace view's screenshot in docs/ (see envUpdateScreenshot).
	traceScreenshotPath = "../docs/traceview.png"
	// rateLimitHeader makes the fake model answer the call with a 429.
	rateLimitHeader = "X-Test-Rate-Limit"
)

// traceAgent is a small agent with a subagent, run through the capture handler in front of the
// fake model: every model call, id and time is real.
type traceAgent struct {
	t      *testing.T
	client *http.Client
	base   string // the rollout's base URL: .../ng-rollout/<id>/v1
}

// chat makes one Chat Completions call with ctx (agentobs.Transport records it for the invocation
// or compaction ctx carries) and returns the id of the tool call the answer asks for ("" for none).
func (a *traceAgent) chat(ctx context.Context, prompt string, tools, rateLimited bool) string {
	a.t.Helper()
	body := map[string]any{"model": "policy-large", "messages": []any{map[string]any{"role": "user", "content": prompt}}}
	if tools {
		body["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "calculator",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"expression": map[string]any{"type": "string"}}}}}}
	}
	b, err := json.Marshal(body)
	require.NoError(a.t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/chat/completions", strings.NewReader(string(b)))
	require.NoError(a.t, err)
	req.Header.Set("Content-Type", "application/json")
	if rateLimited {
		req.Header.Set(rateLimitHeader, "1")
	}
	resp, err := a.client.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	if rateLimited {
		require.Equal(a.t, http.StatusTooManyRequests, resp.StatusCode)
		return ""
	}
	require.Equal(a.t, http.StatusOK, resp.StatusCode, "%s", raw)
	var out struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					ID string `json:"id"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	require.NoError(a.t, json.Unmarshal(raw, &out))
	if len(out.Choices) == 0 || len(out.Choices[0].Message.ToolCalls) == 0 {
		return ""
	}
	return out.Choices[0].Message.ToolCalls[0].ID
}

// traceRun writes the captures of traceRollout — a planner invocation whose tool call starts a
// researcher subagent (its own calls, a tool call running a sandboxed shell), a compaction with
// its summarizing call, a tool call that fails and a rate-limited call — with the observations the
// agentobs recorder writes, and of callsOnlyRollout (captured calls only). It returns the capture
// directory.
func traceRun(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "captures")
	model := fakemodel.New(fakemodel.WithFault(func(c fakemodel.Call) fakemodel.Fault {
		if c.Header.Get(rateLimitHeader) != "" {
			return fakemodel.Fault{Status: http.StatusTooManyRequests}
		}
		return fakemodel.Fault{}
	}))
	h, err := proxy.CaptureHandler(model, proxy.WithCaptureDir(dir), proxy.WithModelServerName(capturegen.ModelServerName),
		proxy.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer func() {
		srv.Close()
		require.NoError(t, h.Shutdown(context.Background()))
	}()
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	proc, err := agentobs.NewObservationProcessor(store)
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc), sdktrace.WithIDGenerator(proxy.RolloutIDGenerator(nil)))
	transport := &http.Transport{}
	a := &traceAgent{t: t, client: &http.Client{Transport: agentobs.Transport(transport), Timeout: 30 * time.Second},
		base: srv.URL + "/ng-rollout/" + traceRollout + "/v1"}
	defer transport.CloseIdleConnections()

	rec, err := agentobs.NewRecorder(tp, traceRollout)
	require.NoError(t, err)
	ctx, root := proxy.StartRollout(t.Context(), tp, traceRollout)
	ctx, planner := rec.StartInvocation(ctx, "planner")
	delegateID := a.chat(ctx, "Plan: what is 6 times 7?", true, false)
	require.NotEmpty(t, delegateID)
	tctx, delegate := agentobs.StartToolCall(ctx, "calculator", delegateID)
	sctx, researcher := rec.StartInvocation(tctx, "researcher")
	calcID := a.chat(sctx, "Research: what is 6 times 7?", true, false)
	require.NotEmpty(t, calcID)
	cctx, calc := agentobs.StartToolCall(sctx, "calculator", calcID)
	obs, err := agentobs.RunSandboxed(cctx, agentobs.SandboxCommand{Path: "sh", Args: []string{"-c", "echo $((6*7))"},
		Role: agentobs.SandboxRoleEnvironment, Timeout: 10 * time.Second})
	require.NoError(t, err)
	require.Equal(t, agentobs.SandboxOutcomeCompleted, obs.Outcome)
	calc.End(nil)
	a.chat(sctx, "Answer: 6 times 7 is 42.", false, false)
	researcher.End(nil)
	delegate.End(nil)
	kctx, comp := agentobs.StartCompaction(ctx, "auto")
	a.chat(kctx, "Summarize the conversation so far.", false, false)
	comp.End(agentobs.CompactionResult{TokensBefore: agentobs.Ptr(120), TokensAfter: agentobs.Ptr(30)})
	checkID := a.chat(ctx, "Check: what is 6 times 7?", true, false)
	require.NotEmpty(t, checkID)
	_, check := agentobs.StartToolCall(ctx, "calculator", checkID)
	check.End(errors.New("calculator crashed"))
	a.chat(ctx, "Final answer?", false, true)
	planner.End(nil)
	root.End()
	require.NoError(t, tp.Shutdown(context.Background()))

	_, err = capturegen.Generate(t.Context(), dir, []capturegen.Call{
		{RolloutID: callsOnlyRollout, Dialect: fakemodel.DialectResponses, Tools: true},
		{RolloutID: callsOnlyRollout, Dialect: fakemodel.DialectMessages, Stream: true},
	})
	require.NoError(t, err)
	return dir
}

// traceRow is what the page shows of one trace view row.
type traceRow struct {
	ID     string  `json:"id"`
	Kind   string  `json:"kind"`
	Depth  int     `json:"depth"`
	Parent string  `json:"parent"`
	Indent float64 `json:"indent"` // the label's left padding in px
	HasBar bool    `json:"hasBar"`
	Left   float64 `json:"left"` // the bar's box in px
	Right  float64 `json:"right"`
	Error  bool    `json:"error"`
}

const traceRowsJS = `(sel) => Array.from(document.querySelectorAll(sel + " .tv-rows .tv-span")).map(r => {
  const bar = r.querySelector(".tv-bar"), box = bar ? bar.getBoundingClientRect() : null;
  return {id: r.dataset.spanId, kind: r.dataset.kind, depth: +r.dataset.depth, parent: r.dataset.parent || "",
    indent: parseFloat(getComputedStyle(r.querySelector(".tv-label")).paddingLeft),
    hasBar: !!bar, left: box ? box.left : 0, right: box ? box.right : 0, error: r.classList.contains("error")};
})`

// TestTraceViewInBrowser opens the real `gymtrace report --html` of an agent run with a subagent
// in headless Chromium: the trace view draws the observation spans and model calls in time order,
// nested (a subagent inside its parent's range and indented), an arrow from each model call to the
// tool call it asked for, a click shows a span's details and the link leads to the model call; a
// rollout without observations shows its model calls alone; nothing leaves the file.
func TestTraceViewInBrowser(t *testing.T) {
	bin := chromiumBinary(t)
	dir := traceRun(t)
	page := filepath.Join(t.TempDir(), "report.html")
	runGymtrace(t, "report", "--capture-dir", dir, "--html", page)

	// What the files say, read independently of the report.
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	lines, damaged, exists, err := agentobs.ReadObservations(store, traceRollout)
	require.NoError(t, err)
	require.True(t, exists)
	require.Zero(t, damaged)
	spanOf := map[string]agentobs.ObservationLine{} // span name → line (unique but for the tool calls)
	for _, l := range lines {
		spanOf[l.Name] = l
	}
	require.Len(t, lines, 7, "2 invocations, 3 tool calls, a sandbox run and a compaction")
	var calls []struct {
		ModelCallID string `json:"model_call_id"`
		CallIndex   int    `json:"call_index"`
		ToolCalls   []struct {
			CallID string `json:"call_id"`
		} `json:"tool_calls"`
	}
	for _, l := range strings.Split(strings.TrimSpace(string(runGymtrace(t, "calls", "--json", "--capture-dir", dir, traceRollout))), "\n") {
		var one struct {
			ModelCallID string `json:"model_call_id"`
			CallIndex   int    `json:"call_index"`
			ToolCalls   []struct {
				CallID string `json:"call_id"`
			} `json:"tool_calls"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &one))
		calls = append(calls, one)
	}
	require.Len(t, calls, 6)

	ctx, requests := newBrowser(t, bin)
	step, cancelStep := context.WithTimeout(ctx, 60*time.Second)
	defer cancelStep()
	view := fmt.Sprintf(`.trace-view[data-rollout-id=%q]`, traceRollout)
	require.NoError(t, chromedp.Do(step,
		chromedp.Navigate("file://"+page),
		chromedp.WaitReady(chromedp.CSS("#calls")),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%q).open = true`, "r-"+traceRollout)),
		chromedp.WaitVisible(chromedp.CSS(view+" .tv-rows .tv-span")),
	))
	rows, err := chromedp.Run(step, chromedp.Evaluate[[]traceRow](fmt.Sprintf(`(%s)(%q)`, traceRowsJS, view)))
	require.NoError(t, err)
	require.Len(t, rows, len(lines)+len(calls), "every observation span and model call is a row")

	byID := map[string]traceRow{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	row := func(name string) traceRow {
		t.Helper()
		l, ok := spanOf[name]
		require.True(t, ok, "observation span %q", name)
		r, ok := byID["span-"+l.SpanID.String()]
		require.True(t, ok, "row of %q", name)
		return r
	}
	planner, researcher := row("invoke_agent planner"), row("invoke_agent researcher")
	assert.Equal(t, 0, planner.Depth)
	assert.Equal(t, rows[0].ID, planner.ID, "the planner starts first")

	// Nested: each row sits below its parent, indented further, its bar inside the parent's range
	// (model calls are timed by the proxy, observation spans by the agent: 1 px of slack).
	pos := map[string]int{}
	for i, r := range rows {
		pos[r.ID] = i
		require.True(t, r.HasBar, "row %s has a bar", r.ID)
		if r.Parent == "" {
			continue
		}
		p, ok := byID[r.Parent]
		require.True(t, ok, "parent of %s is drawn", r.ID)
		assert.Less(t, pos[p.ID], i, "%s after its parent", r.ID)
		assert.Equal(t, p.Depth+1, r.Depth, "depth of %s", r.ID)
		assert.Greater(t, r.Indent, p.Indent, "%s indented under its parent", r.ID)
		assert.GreaterOrEqual(t, r.Left, p.Left-1, "%s starts inside its parent", r.ID)
		assert.LessOrEqual(t, r.Right, p.Right+1, "%s ends inside its parent", r.ID)
	}
	// The subagent sits inside the tool call that started it, which the planner ran.
	delegate := byID[researcher.Parent]
	assert.Equal(t, "tool_call", delegate.Kind)
	assert.Equal(t, planner.ID, delegate.Parent)
	assert.Equal(t, 2, researcher.Depth)
	// Drawn in time order: siblings left to right, the way the agent ran them.
	for i, r := range rows {
		for _, s := range rows[i+1:] {
			if s.Parent == r.Parent {
				assert.LessOrEqual(t, r.Left, s.Left+0.5, "sibling %s before %s", r.ID, s.ID)
			}
		}
	}
	// Model calls belong to their invocation (the SPEC §6.5 join), the summarizing call to the compaction.
	callRow := func(i int) traceRow { return byID[fmt.Sprintf("call-%d", calls[i].CallIndex)] }
	assert.Equal(t, planner.ID, callRow(0).Parent)
	assert.Equal(t, researcher.ID, callRow(1).Parent)
	assert.Equal(t, researcher.ID, callRow(2).Parent)
	assert.Equal(t, row("context_compaction").ID, callRow(3).Parent)
	assert.Equal(t, planner.ID, callRow(5).Parent)
	assert.True(t, callRow(5).Error, "the rate-limited call is drawn as an error")
	failed := byID["span-"+toolSpan(t, lines, calls[4].ToolCalls[0].CallID).SpanID.String()]
	assert.True(t, failed.Error, "the failed tool call is drawn as an error")

	// An arrow from each model call to the tool call it asked for.
	type link struct{ From, To string }
	links, err := chromedp.Run(step, chromedp.Evaluate[[]link](fmt.Sprintf(
		`Array.from(document.querySelectorAll(%q)).map(p => ({from: p.dataset.from, to: p.dataset.to}))`, view+" path.tv-link")))
	require.NoError(t, err)
	var want []link
	for i, c := range calls {
		for _, tc := range c.ToolCalls {
			want = append(want, link{callRow(i).ID, "span-" + toolSpan(t, lines, tc.CallID).SpanID.String()})
		}
	}
	require.Len(t, want, 3)
	assert.ElementsMatch(t, want, links)

	// A click on the subagent's tool call shows its details; its link leads to the model call.
	target := want[1]
	require.NoError(t, chromedp.Do(step, chromedp.Click(chromedp.CSS(fmt.Sprintf(`%s .tv-span[data-span-id=%q] .tv-bar`, view, target.To)))))
	details, err := chromedp.Run(step, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).innerText`, view+" .tv-details")))
	require.NoError(t, err)
	assert.Contains(t, details, "execute_tool calculator")
	assert.Contains(t, details, calls[1].ToolCalls[0].CallID, "the tool call id")
	assert.Contains(t, details, "asked for by")
	require.NoError(t, chromedp.Do(step, chromedp.Click(chromedp.CSS(fmt.Sprintf(`%s .tv-details button.tv-goto[data-target=%q]`, view, target.From)))))
	details, err = chromedp.Run(step, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).innerText`, view+" .tv-details")))
	require.NoError(t, err)
	assert.Contains(t, details, calls[1].ModelCallID, "the model call's details")
	assert.Contains(t, details, "tokens in / out")
	selected, err := chromedp.Run(step, chromedp.Evaluate[[]string](fmt.Sprintf(
		`Array.from(document.querySelectorAll(%q)).map(r => r.dataset.spanId)`, view+" .tv-span.selected")))
	require.NoError(t, err)
	assert.Equal(t, []string{target.From}, selected, "the link selects the model call")

	// The rollout without observations: its model calls alone.
	plain := fmt.Sprintf(`.trace-view[data-rollout-id=%q]`, callsOnlyRollout)
	require.NoError(t, chromedp.Do(step,
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%q).open = true`, "r-"+callsOnlyRollout)),
		chromedp.WaitVisible(chromedp.CSS(plain+" .tv-rows .tv-span")),
	))
	plainRows, err := chromedp.Run(step, chromedp.Evaluate[[]traceRow](fmt.Sprintf(`(%s)(%q)`, traceRowsJS, plain)))
	require.NoError(t, err)
	require.Len(t, plainRows, 2)
	for _, r := range plainRows {
		assert.Equal(t, "model_call", r.Kind)
		assert.Zero(t, r.Depth)
	}

	if *updateScreenshot || os.Getenv(envUpdateScreenshot) == "1" {
		require.NoError(t, chromedp.Do(step,
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%q).open = false`, "r-"+callsOnlyRollout)),
			chromedp.Click(chromedp.CSS(fmt.Sprintf(`%s .tv-span[data-span-id=%q] .tv-bar`, view, target.To))),
		))
		png, err := chromedp.Run(step, chromedp.Screenshot(chromedp.CSS(fmt.Sprintf("#r-%s", traceRollout))))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(traceScreenshotPath, png, 0o644))
		t.Logf("wrote %s (%d bytes)", traceScreenshotPath, len(png))
	}
	assertLocalRequests(t, requests())
}

// toolSpan is the execute_tool line whose gen_ai.tool.call.id is id.
func toolSpan(t *testing.T, lines []agentobs.ObservationLine, id string) agentobs.ObservationLine {
	t.Helper()
	for _, l := range lines {
		for _, kv := range l.Attributes {
			if kv.Key == "gen_ai.tool.call.id" && kv.Value.AsString() == id {
				return l
			}
		}
	}
	t.Fatalf("no tool call span with id %s", id)
	return agentobs.ObservationLine{}
}
