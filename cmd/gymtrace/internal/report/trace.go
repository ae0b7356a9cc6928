package report

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// MaxTraceSpans bounds the rows of one rollout's [TraceView]: past it, the rows after the first
// MaxTraceSpans in drawing order are left out and counted in TraceView.Omitted (the page says how
// many). Drawing order is tree order, so every drawn row's parent is drawn too.
const MaxTraceSpans = 2000

// The kinds of a [TraceSpan]: the agentobs record kinds of observation spans (SPEC §6.2), a
// captured model call, and an observations-file line of no known kind.
const (
	TraceKindInvocation = agentobs.KindAgentInvocation
	TraceKindToolCall   = agentobs.KindToolCall
	TraceKindCompaction = agentobs.KindContextCompaction
	TraceKindSandbox    = agentobs.KindSandbox
	TraceKindModelCall  = "model_call"
	TraceKindOther      = "span"
)

// maxDetailValue bounds the text of one detail value (a compaction summary can be long), in bytes.
const maxDetailValue = 300

// TraceView is one rollout's waterfall (the HTML report's trace view): its agent invocations
// (subagents nested in the invocation or tool call that started them), tool calls, compactions,
// sandbox runs and model calls on one time axis, built from the rollout's capture records and
// observations file by [NewTraceView]. Encoded as JSON (the page's data) with the keys of the
// field tags.
type TraceView struct {
	// Start is the axis origin, the earliest start of any span, in UTC Unix seconds; 0 when no span
	// has a time.
	Start float64 `json:"start"`
	// DurationMS is the axis length in milliseconds: the latest end (or start) minus Start.
	DurationMS float64 `json:"duration_ms"`
	// Spans are the rows in drawing order: tree order, siblings by start time (untimed last), then
	// kind and id.
	Spans []TraceSpan `json:"spans"`
	// Omitted counts the rows left out past [MaxTraceSpans], or past the report's row budget
	// (Options.TraceRowBudget) when BudgetSpent.
	Omitted int `json:"omitted"`
	// BudgetSpent tells that rows were left out because the report's trace row budget was spent.
	BudgetSpent bool `json:"budget_spent,omitempty"`
	// Observations tells whether the rollout has an observations file; without one the view holds
	// its model calls alone.
	Observations bool `json:"observations"`
	// DamagedObservationLines counts the observations file's lines that could not be read (not drawn).
	DamagedObservationLines int `json:"damaged_observation_lines"`
	// ObservationsError says why the observations file could not be read ("" when it could).
	ObservationsError string `json:"observations_error,omitempty"`
}

// TraceSpan is one row of a [TraceView].
type TraceSpan struct {
	// ID is unique in the view: "call-<call_index>" for a model call, "span-<span id>" for an
	// observation span ("span-<trace id>-<span id>" when an earlier line of another trace has the
	// same span id).
	ID     string `json:"id"`
	Parent string `json:"parent,omitempty"` // the parent row's ID; "" for a root
	Depth  int    `json:"depth"`            // 0 for a root, parent's + 1
	Kind   string `json:"kind"`             // one of the TraceKind constants
	Label  string `json:"label"`            // the span name, or "#<call_index> <dialect> <model>"
	// StartMS is the start as an offset from TraceView.Start in milliseconds (rounded to 1 µs);
	// nil when the span has no start time (drawn without a bar).
	StartMS *float64 `json:"start_ms"`
	// DurationMS is the span's duration in milliseconds; nil when it has not ended or is unknown.
	DurationMS *float64 `json:"duration_ms"`
	// Status is the span's status in words: a model call's error_category or HTTP status, an
	// observation's gymtrace.observation.status, else "error" (with error.type) for an error span,
	// "not ended", or "ok".
	Status string `json:"status"`
	Error  bool   `json:"error"` // the span failed (drawn in the error colour)
	// TokensIn and TokensOut are a model call's tokens (SPEC §3.5); nil when unknown or not a call.
	TokensIn  *int64 `json:"tokens_in,omitempty"`
	TokensOut *int64 `json:"tokens_out,omitempty"`
	// AskedBy is, for a tool call, the ID of the model call whose response holds its
	// gen_ai.tool.call.id among its tool_calls (SPEC §3.6); "" when none is drawn.
	AskedBy string `json:"asked_by,omitempty"`
	// Asks are, for a model call, the IDs of the drawn tool calls it asked for.
	Asks []string `json:"asks,omitempty"`
	// Details are what a click on the row shows, as [name, value] pairs in display order.
	Details [][2]string `json:"details"`
}

// traceNode is a row being built.
type traceNode struct {
	TraceSpan
	key      spanKey                   // observation span identity (zero for a model call)
	line     *agentobs.ObservationLine // nil for a model call
	start    *float64                  // UTC Unix seconds
	end      *float64
	invID    string // an invocation's invocation_id
	parent   *traceNode
	children []*traceNode
}

type spanKey struct {
	trace trace.TraceID
	span  trace.SpanID
}

// NewTraceView builds a rollout's trace view from its valid capture records (in capture order)
// and the lines of its observations file (agentobs.ReadObservations; exists and damaged as it
// returns them).
//
// Nesting: an observation span sits under the observation span its parent_span_id names (same
// trace); without one in the file, under the invocation its explicit attribute names
// (gymtrace.agent.invocation.id on a tool call or compaction, gymtrace.agent.parent_invocation.id
// on an invocation); else it is a root. A model call sits under the compaction whose span
// references it (gymtrace.model_call.ids or a gymtrace.model_call event), else under the
// invocation that owns it by the SPEC §6.5 join (agentobs.Join of the file's bundle), else it is a
// root. A parent chain that loops is cut at its earliest span. The tool → model call link is by
// exact id: the calls whose tool_calls hold the tool call's gen_ai.tool.call.id; of several, those
// of the tool call's invocation, then the last that started at or before the tool call.
// NewTraceView never fails: whatever a line lacks is drawn as unknown. Safe for concurrent use.
func NewTraceView(calls []capture.ModelCallRecord, lines []agentobs.ObservationLine, exists bool, damaged int) *TraceView {
	v := &TraceView{Observations: exists, DamagedObservationLines: damaged}
	var nodes []*traceNode
	spans := make(map[spanKey]*traceNode, len(lines))
	invocations := make(map[string]*traceNode)
	ids := make(map[string]bool, len(lines))
	for i := range lines {
		l := &lines[i]
		k := spanKey{l.TraceID, l.SpanID}
		if _, dup := spans[k]; dup {
			continue
		}
		n := observationNode(l)
		n.key = k
		if ids[n.ID] { // the same span id in another trace of the rollout
			n.ID = "span-" + l.TraceID.String() + "-" + l.SpanID.String()
		}
		ids[n.ID] = true
		spans[k] = n
		nodes = append(nodes, n)
		if n.Kind == TraceKindInvocation {
			if _, dup := invocations[n.invID]; !dup {
				invocations[n.invID] = n
			}
		}
	}
	for _, n := range nodes {
		n.parent = observationParent(n, spans, invocations)
	}

	owners := callOwners(calls, lines)
	refs := compactionRefs(nodes)
	callNodes := make([]*traceNode, len(calls))
	for i := range calls {
		n := callNode(&calls[i])
		callNodes[i] = n
		if id := calls[i].ModelCallID; id != nil {
			n.parent = refs[*id]
		}
		if n.parent == nil {
			n.parent = invocations[owners[callKey(&calls[i])]]
		}
		nodes = append(nodes, n)
	}
	linkToolCalls(nodes, callNodes, calls)

	timed := false
	for _, n := range nodes {
		if n.start != nil && (!timed || *n.start < v.Start) {
			v.Start, timed = *n.start, true
		}
	}
	var last float64
	for _, n := range nodes {
		for _, t := range []*float64{n.start, n.end} {
			if t != nil {
				last = max(last, *t-v.Start)
			}
		}
		if n.start != nil {
			n.StartMS = roundUS((*n.start - v.Start) * 1000)
		}
	}
	v.DurationMS = *roundUS(last * 1000)

	order := treeOrder(nodes)
	v.Spans = make([]TraceSpan, 0, len(order))
	for _, n := range order {
		if n.parent != nil {
			n.Parent = n.parent.ID
		}
		v.Spans = append(v.Spans, n.TraceSpan)
	}
	v.cut(MaxTraceSpans)
	return v
}

// cut keeps the first n (≥ 0) rows in drawing order, counts the rest in Omitted and drops the
// links to rows left out. Tree order keeps every kept row's parent.
func (v *TraceView) cut(n int) {
	if len(v.Spans) > n {
		v.Omitted += len(v.Spans) - n
		v.Spans = append(make([]TraceSpan, 0, n), v.Spans[:n]...) // frees the rows left out
	}
	drawn := make(map[string]bool, len(v.Spans))
	for i := range v.Spans {
		drawn[v.Spans[i].ID] = true
	}
	for i := range v.Spans {
		s := &v.Spans[i]
		if !drawn[s.AskedBy] {
			s.AskedBy = ""
		}
		s.Asks = slices.DeleteFunc(s.Asks, func(id string) bool { return !drawn[id] })
		if len(s.Asks) == 0 {
			s.Asks = nil
		}
	}
}

// roundUS rounds milliseconds to the microsecond.
func roundUS(ms float64) *float64 {
	r := math.Round(ms*1000) / 1000
	return &r
}

// observationNode is the row of one observations-file line.
func observationNode(l *agentobs.ObservationLine) *traceNode {
	attrs := capture.Attributes(l.Attributes)
	kind, ok := agentobs.ObservationKind(attrs)
	if !ok {
		kind = TraceKindOther
	}
	n := &traceNode{line: l, TraceSpan: TraceSpan{ID: "span-" + l.SpanID.String(), Kind: kind, Label: l.Name}}
	if n.Label == "" {
		n.Label = kind
	}
	if !l.StartTime.IsZero() {
		n.start = agentobs.Ptr(capture.UnixSeconds(l.StartTime))
	}
	if !l.EndTime.IsZero() {
		n.end = agentobs.Ptr(capture.UnixSeconds(l.EndTime))
		if !l.EndTime.Before(l.StartTime) {
			n.DurationMS = roundUS(float64(l.EndTime.Sub(l.StartTime).Nanoseconds()) / 1e6)
		}
	}
	if kind == TraceKindInvocation {
		n.invID = cmp.Or(strAttr(attrs, semconv.GymtraceAgentInvocationIDKey), l.SpanID.String())
	}
	n.Status, n.Error = observationStatus(l, attrs)
	n.Details = observationDetails(l)
	return n
}

// observationStatus is a line's status in words and whether it failed.
func observationStatus(l *agentobs.ObservationLine, attrs capture.Attributes) (string, bool) {
	errType := strAttr(attrs, semconv.ErrorTypeKey)
	if s := strAttr(attrs, semconv.GymtraceObservationStatusKey); s != "" {
		return s, !slices.Contains([]string{"completed", "unknown", "ok"}, s)
	}
	switch {
	case l.EndTime.IsZero():
		return "not ended", true
	case l.StatusCode == codes.Error && errType != "":
		return "error: " + errType, true
	case l.StatusCode == codes.Error:
		return "error", true
	}
	return "ok", false
}

// observationParent is the parent row of an observation span (see [NewTraceView]).
func observationParent(n *traceNode, spans map[spanKey]*traceNode, invocations map[string]*traceNode) *traceNode {
	if p := spans[spanKey{n.key.trace, n.line.ParentSpanID}]; p != nil && n.line.ParentSpanID.IsValid() && p != n {
		return p
	}
	attrs := capture.Attributes(n.line.Attributes)
	key := semconv.GymtraceAgentInvocationIDKey
	if n.Kind == TraceKindInvocation {
		key = semconv.GymtraceAgentParentInvocationIDKey
	} else if n.Kind != TraceKindToolCall && n.Kind != TraceKindCompaction {
		return nil
	}
	if p := invocations[strAttr(attrs, key)]; p != n {
		return p
	}
	return nil
}

// strAttr is the string attribute k of a, or "".
func strAttr(a capture.Attributes, k attribute.Key) string {
	v, ok := a.Lookup(string(k))
	if !ok || v.Type() != attribute.STRING {
		return ""
	}
	return v.AsString()
}

// callKey names a call for the join's ownership: its model_call_id, else its response id.
func callKey(c *capture.ModelCallRecord) string {
	switch {
	case c.ModelCallID != nil && *c.ModelCallID != "":
		return "id:" + *c.ModelCallID
	case c.ResponseID != nil && c.ModelRef != nil:
		return "resp:" + c.ModelRef.Name + "/" + *c.ResponseID
	}
	return ""
}

// callOwners maps each call the SPEC §6.5 join gives to an invocation (callKey) to its invocation id.
func callOwners(calls []capture.ModelCallRecord, lines []agentobs.ObservationLine) map[string]string {
	owners := make(map[string]string)
	if len(lines) == 0 {
		return owners
	}
	joined := agentobs.Join(agentobs.BuildBundle(lines), calls)
	for _, r := range joined.Records {
		inv, ok := r.(*agentobs.AgentInvocation)
		if !ok {
			continue
		}
		for _, ref := range inv.ModelCalls {
			c := capture.ModelCallRecord{ModelCallID: ref.ModelCallID, ResponseID: ref.ResponseID}
			if ref.ModelRef != nil {
				c.ModelRef = &capture.ModelRef{Type: ref.ModelRef.Type, Name: ref.ModelRef.Name}
			}
			if k := callKey(&c); k != "" {
				if _, taken := owners[k]; !taken {
					owners[k] = inv.InvocationID
				}
			}
		}
	}
	delete(owners, "")
	return owners
}

// compactionRefs maps each model_call_id a compaction span references (gymtrace.model_call.ids,
// gymtrace.model_call events) to the first such compaction's row.
func compactionRefs(nodes []*traceNode) map[string]*traceNode {
	refs := make(map[string]*traceNode)
	add := func(id string, n *traceNode) {
		if _, taken := refs[id]; !taken && id != "" {
			refs[id] = n
		}
	}
	for _, n := range nodes {
		if n.Kind != TraceKindCompaction {
			continue
		}
		attrs := capture.Attributes(n.line.Attributes)
		if v, ok := attrs.Lookup(string(semconv.GymtraceModelCallIDsKey)); ok && v.Type() == attribute.STRINGSLICE {
			for _, id := range v.AsStringSlice() {
				add(id, n)
			}
		}
		for _, e := range n.line.Events {
			add(strAttr(capture.Attributes(e.Attributes), semconv.GymtraceModelCallIDKey), n)
		}
	}
	return refs
}

// callNode is the row of one model call.
func callNode(c *capture.ModelCallRecord) *traceNode {
	label := "#" + strconv.Itoa(c.CallIndex)
	for _, p := range []*string{c.Dialect, c.Model} {
		if p != nil {
			label += " " + *p
		}
	}
	n := &traceNode{start: c.StartedAt, end: c.CompletedAt, TraceSpan: TraceSpan{
		ID: "call-" + strconv.Itoa(c.CallIndex), Kind: TraceKindModelCall, Label: label,
		TokensIn: c.TokensIn, TokensOut: c.TokensOut,
	}}
	if c.LatencyTotalMS != nil && !math.IsNaN(*c.LatencyTotalMS) && !math.IsInf(*c.LatencyTotalMS, 0) {
		n.DurationMS = roundUS(*c.LatencyTotalMS)
	}
	switch {
	case c.ErrorCategory != nil:
		n.Status, n.Error = *c.ErrorCategory, true
	case c.StatusCode != nil:
		n.Status, n.Error = strconv.Itoa(*c.StatusCode), *c.StatusCode >= 400
	default:
		n.Status = "no status"
	}
	n.Details = callDetails(c)
	return n
}

// linkToolCalls sets each tool call's AskedBy and each call's Asks (see [NewTraceView]), and adds
// the link and the arguments' size to the tool call's details.
func linkToolCalls(nodes, callNodes []*traceNode, calls []capture.ModelCallRecord) {
	byToolCall := make(map[string][]int) // tool call id → positions in calls
	for i := range calls {
		for _, tc := range calls[i].ToolCalls {
			var id string
			if json.Unmarshal(tc.CallID, &id) == nil && id != "" {
				byToolCall[id] = append(byToolCall[id], i)
			}
		}
	}
	for _, n := range nodes {
		if n.Kind != TraceKindToolCall {
			continue
		}
		id := strAttr(capture.Attributes(n.line.Attributes), semconv.GenAIToolCallIDKey)
		cands := byToolCall[id]
		if len(cands) == 0 {
			continue
		}
		if inv := invocationOf(n); len(cands) > 1 && inv != nil {
			if own := slices.DeleteFunc(slices.Clone(cands), func(i int) bool { return invocationOf(callNodes[i]) != inv }); len(own) > 0 {
				cands = own
			}
		}
		pick := cands[0]
		for _, i := range cands[1:] {
			if s := calls[i].StartedAt; s != nil && n.start != nil && *s <= *n.start {
				pick = i
			}
		}
		c := callNodes[pick]
		n.AskedBy = c.ID
		c.Asks = append(c.Asks, n.ID)
		asked := c.Label
		if len(cands) > 1 {
			asked += " (" + strconv.Itoa(len(cands)) + " calls hold this tool call id)"
		}
		n.Details = append(n.Details, [2]string{"asked for by", asked})
		for _, tc := range calls[pick].ToolCalls {
			var tid string
			if json.Unmarshal(tc.CallID, &tid) == nil && tid == id {
				n.Details = append(n.Details, [2]string{"arguments size", humanBytes(len(tc.Arguments))})
				break
			}
		}
	}
}

// invocationOf is the nearest invocation row above n (n itself for an invocation), nil for none.
func invocationOf(n *traceNode) *traceNode {
	for steps := 0; n != nil && steps < 1<<16; steps++ {
		if n.Kind == TraceKindInvocation {
			return n
		}
		n = n.parent
	}
	return nil
}

// treeOrder returns the rows in drawing order and sets each row's Depth; a parent chain that
// loops is cut at its earliest row, which becomes a root.
func treeOrder(nodes []*traceNode) []*traceNode {
	var roots []*traceNode
	for _, n := range nodes {
		if n.parent == nil {
			roots = append(roots, n)
		} else {
			n.parent.children = append(n.parent.children, n)
		}
	}
	reached := make(map[*traceNode]bool, len(nodes))
	mark := func(n *traceNode) {
		stack := []*traceNode{n}
		for len(stack) > 0 {
			n, stack = stack[len(stack)-1], stack[:len(stack)-1]
			reached[n] = true
			stack = append(stack, n.children...)
		}
	}
	for _, r := range roots {
		mark(r)
	}
	rest := slices.DeleteFunc(slices.Clone(nodes), func(n *traceNode) bool { return reached[n] })
	slices.SortStableFunc(rest, compareNodes)
	for _, n := range rest {
		if reached[n] {
			continue
		}
		n.parent.children = slices.DeleteFunc(n.parent.children, func(c *traceNode) bool { return c == n })
		n.parent = nil
		roots = append(roots, n)
		mark(n)
	}
	order := make([]*traceNode, 0, len(nodes))
	var visit func(n *traceNode, depth int)
	visit = func(n *traceNode, depth int) {
		n.Depth = depth
		order = append(order, n)
		slices.SortStableFunc(n.children, compareNodes)
		for _, c := range n.children {
			visit(c, depth+1)
		}
	}
	slices.SortStableFunc(roots, compareNodes)
	for _, r := range roots {
		visit(r, 0)
	}
	return order
}

// compareNodes orders siblings: by start (untimed last), then kind, then id.
func compareNodes(a, b *traceNode) int {
	switch {
	case a.start == nil && b.start != nil:
		return 1
	case a.start != nil && b.start == nil:
		return -1
	case a.start != nil:
		if c := cmp.Compare(*a.start, *b.start); c != 0 {
			return c
		}
	}
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), strings.Compare(a.ID, b.ID))
}

// callDetails are a model call's details.
func callDetails(c *capture.ModelCallRecord) [][2]string {
	d := detailList{}
	d.add("model_call_id", strOrDash(c.ModelCallID))
	d.add("call_index", strconv.Itoa(c.CallIndex))
	d.add("response_id", strOrDash(c.ResponseID))
	d.add("model", strOrDash(c.Model))
	d.add("dialect", strOrDash(c.Dialect))
	d.add("status_code", fmtStatus(c.StatusCode))
	d.add("finish_reason", strOrDash(c.FinishReason))
	d.add("error_category", strOrDash(c.ErrorCategory))
	d.add("tokens in / out", fmtInt(c.TokensIn)+" / "+fmtInt(c.TokensOut))
	d.add("tokens reasoning / cached", fmtInt(c.TokensReasoning)+" / "+fmtInt(c.CachedTokens))
	d.add("started_at", fmtTime(c.StartedAt))
	d.add("latency", fmtMS(c.LatencyTotalMS))
	d.add("time to first token", fmtMS(c.LatencyTTFTMS))
	for _, tc := range c.ToolCalls {
		d.add("tool call", string(tc.Name)+" "+string(tc.CallID)+" ("+humanBytes(len(tc.Arguments))+" of arguments)")
	}
	return d
}

// observationDetails are an observation span's details: its identity, times and kept attributes.
func observationDetails(l *agentobs.ObservationLine) [][2]string {
	d := detailList{}
	d.add("span_id", l.SpanID.String())
	parent := dash
	if l.ParentSpanID.IsValid() {
		parent = l.ParentSpanID.String()
	}
	d.add("parent_span_id", parent)
	d.add("trace_id", l.TraceID.String())
	for _, t := range []struct {
		name string
		at   time.Time
	}{{"start", l.StartTime}, {"end", l.EndTime}} {
		v := dash
		if !t.at.IsZero() {
			v = t.at.UTC().Format("2006-01-02 15:04:05.000000Z")
		}
		d.add(t.name, v)
	}
	d.add("span status", l.StatusCode.String())
	for _, kv := range l.Attributes {
		d.add(string(kv.Key), kv.Value.Emit())
	}
	for _, e := range l.Events {
		id := strAttr(capture.Attributes(e.Attributes), semconv.GymtraceModelCallIDKey)
		d.add(e.Name, cmp.Or(id, strAttr(capture.Attributes(e.Attributes), semconv.GenAIResponseIDKey), dash))
	}
	return d
}

// detailList collects [name, value] pairs, cutting long values.
type detailList [][2]string

func (d *detailList) add(name, value string) {
	if len(value) > maxDetailValue {
		cut := maxDetailValue
		for cut > 0 && !utf8Start(value[cut]) {
			cut--
		}
		value = value[:cut] + "… (" + humanBytes(len(value)) + ")"
	}
	*d = append(*d, [2]string{name, value})
}

// utf8Start tells whether b starts a UTF-8 sequence.
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
