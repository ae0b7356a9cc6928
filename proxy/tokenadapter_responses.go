package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/sdk/stream"
	"github.com/gymtrace/gymtrace/semconv"
)

// vLLM's Responses API (vLLM's entrypoints/openai/responses: protocol.py, serving.py,
// context.py's SimpleContext) has no inline token ids, but a request can ask for the two facts
// the token entry needs (docs/TOKENS.md §0 T1–T3):
//   - "enable_response_messages": true fills the answer's input_messages with
//     [{message: the prompt's text, tokens: its ids}] and output_messages with [{message, tokens:
//     the generated ids}] (for models without the Harmony format; a Harmony model, gpt-oss,
//     returns Harmony messages without token lists there);
//   - "include": ["message.output_text.logprobs"] puts the log probs of every generated token on
//     the message item's output_text (vLLM computes them over all generated ids and gives them
//     to the one message item; an answer without text has no message item and so no log probs).
//
// The proxy adds what the client's request lacks and restores the answer to what vLLM sends
// without it (T2): input_messages and output_messages null; the echoed top_logprobs null (vLLM
// echoes sampling_params.logprobs, which is None without the include); output_text logprobs null
// in response objects and output items, [] in the stream events' own members (output_text delta
// and done events, content parts), as vLLM writes them when not asked.

// logprobsInclude is the Responses "include" value that asks for output_text log probs.
const logprobsInclude = "message.output_text.logprobs"

// responsesRestore names the restore of a Responses answer: what the proxy's additions changed.
type responsesRestore struct {
	messages bool // enable_response_messages was added: input_messages, output_messages → null
	logprobs bool // the include was added: top_logprobs → null, output_text logprobs → null / []
}

func (r responsesRestore) any() bool { return r.messages || r.logprobs }

// newResponsesAdapterCall decides the additions to a vLLM Responses request req (a JSON object).
func newResponsesAdapterCall(fromLogprobs bool, req ojson.Value) *adapterCall {
	a := &adapterCall{source: TokenSourceVLLM, fromLogprobs: fromLogprobs, dialect: stream.DialectResponses}
	if s, ok := req.Get("stream"); ok {
		a.stream, _ = s.AsBool()
	}
	if v, ok := req.Get("background"); ok {
		if b, _ := v.AsBool(); b {
			a.refuse = "a background Responses request is answered later, without its tokens (vLLM's enable_response_messages is for non-background requests)"
			return a
		}
	}
	switch v, ok := req.Get("enable_response_messages"); {
	case !ok || v.IsNull():
		a.inject = append(a.inject, ojson.Member{Key: "enable_response_messages", Value: ojson.Bool(true)})
		a.restore.responses.messages = true
	case v.Kind() != ojson.KindBool:
		a.refuse = "the client's request sets enable_response_messages to a value other than a boolean"
		return a
	default:
		if b, _ := v.AsBool(); !b {
			a.refuse = "the client's request sets enable_response_messages to false, so the answer carries no token ids"
			return a
		}
	}
	inc, ok := req.Get("include")
	switch {
	case !ok || inc.IsNull():
		a.inject = append(a.inject, ojson.Member{Key: "include", Value: ojson.Array(ojson.String(logprobsInclude))})
		a.restore.responses.logprobs = true
	case inc.Kind() != ojson.KindArray:
		a.refuse = "the client's request sets include to a value other than a list"
		return a
	case !slices.ContainsFunc(inc.Elems(), func(e ojson.Value) bool { s, _ := e.AsString(); return s == logprobsInclude }):
		// The client's own list, with the log probs added: it replaces the client's member.
		a.replace = append(a.replace, ojson.Member{Key: "include", Value: ojson.Array(append(slices.Clone(inc.Elems()), ojson.String(logprobsInclude))...)})
		a.restore.responses.logprobs = true
	}
	return a
}

// replaceMembers returns body with the value of the last member of each name in ms (the one
// Python's json reads) replaced by that member's value; body's other bytes are kept.
func replaceMembers(body []byte, ms []ojson.Member) []byte {
	spans, ok := topMembers(body)
	if !ok {
		return body
	}
	var edits []byteEdit
	for _, m := range ms {
		at := -1
		var end int
		for _, sp := range spans {
			if sp.name == m.Key {
				at, end = sp.valStart, sp.valEnd
			}
		}
		if at >= 0 {
			edits = append(edits, byteEdit{at, end, string(m.Value.AppendJSON(nil))})
		}
	}
	return applyEdits(make([]byte, 0, len(body)+64), body, sortEdits(edits))
}

// topMembers returns the members of the JSON object body with their offsets in body: read
// strictly ([ojson.ParseLazy]), or, for text strict JSON refuses that json.loads reads (integers
// beyond 64 bits, NaN, a float out of range), leniently as editLenient reads an answer.
func topMembers(body []byte) ([]memberSpan, bool) {
	if v, err := ojson.ParseLazy(body); err == nil {
		if v.Kind() != ojson.KindObject {
			return nil, false
		}
		return appendMemberSpans(nil, v, len(body)-len(bytes.TrimLeft(body, " \t\r\n"))), true
	}
	scan := body
	if masked, found := maskNonFinite(body); found {
		scan = masked
	}
	spans, err := scanTopObject(scan)
	return spans, err == nil
}

// responseObjectEdits appends the restore edits of a Responses response object o, whose text
// starts at b[base].
func responseObjectEdits(edits []byteEdit, b []byte, o ojson.Value, base int, r responsesRestore) []byteEdit {
	if o.Kind() != ojson.KindObject {
		return edits
	}
	for sp := range o.Spans() {
		switch {
		case r.messages && (sp.Key == "input_messages" || sp.Key == "output_messages"):
			edits = setValue(edits, b, base, sp, "null")
		case r.logprobs && sp.Key == "top_logprobs":
			edits = setValue(edits, b, base, sp, "null")
		case r.logprobs && sp.Key == "output" && sp.Value.Kind() == ojson.KindArray:
			for it := range sp.Value.Spans() {
				edits = itemEdits(edits, b, base+sp.Start+it.Start, it.Value, "null")
			}
		}
	}
	return edits
}

// itemEdits appends the edits that set the logprobs of each output_text part of the output item
// o (text at b[base]) to repl.
func itemEdits(edits []byteEdit, b []byte, base int, o ojson.Value, repl string) []byteEdit {
	if o.Kind() != ojson.KindObject {
		return edits
	}
	for sp := range o.Spans() {
		if sp.Key != "content" || sp.Value.Kind() != ojson.KindArray {
			continue
		}
		for part := range sp.Value.Spans() {
			edits = partEdits(edits, b, base+sp.Start+part.Start, part.Value, repl)
		}
	}
	return edits
}

// partEdits appends the edit that sets the logprobs of the output_text part o (text at b[base])
// to repl, when they are a non-empty list (the proxy's doing).
func partEdits(edits []byteEdit, b []byte, base int, o ojson.Value, repl string) []byteEdit {
	if o.Kind() != ojson.KindObject {
		return edits
	}
	if t, _ := o.Get("type"); !isString(t, "output_text") {
		return edits
	}
	for sp := range o.Spans() {
		if sp.Key == "logprobs" && sp.Value.Kind() == ojson.KindArray && !sp.Value.IsEmpty() {
			edits = setValue(edits, b, base, sp, repl)
		}
	}
	return edits
}

// responsesEventEdits returns the restore edits of one Responses stream event v, whose text is b.
func responsesEventEdits(b []byte, v ojson.Value, r responsesRestore) []byteEdit {
	base := len(b) - len(bytes.TrimLeft(b, " \t\r\n"))
	typ, _ := v.Get("type")
	var edits []byteEdit
	for sp := range v.Spans() {
		at := base + sp.Start
		switch {
		case sp.Key == "response":
			edits = responseObjectEdits(edits, b, sp.Value, at, r)
		case !r.logprobs:
		case sp.Key == "logprobs" && (isString(typ, "response.output_text.delta") || isString(typ, "response.output_text.done")):
			if sp.Value.Kind() == ojson.KindArray && !sp.Value.IsEmpty() {
				edits = setValue(edits, b, base, sp, "[]")
			}
		case sp.Key == "part":
			edits = partEdits(edits, b, at, sp.Value, "[]")
		case sp.Key == "item":
			edits = itemEdits(edits, b, at, sp.Value, "null")
		}
	}
	return sortEdits(edits)
}

// setValue appends the edit that replaces the value of sp (offsets from base) with repl, unless
// it already is repl.
func setValue(edits []byteEdit, b []byte, base int, sp ojson.Span, repl string) []byteEdit {
	start, end := base+sp.Start, base+sp.End
	if string(b[start:end]) == repl {
		return edits
	}
	return append(edits, byteEdit{start, end, repl})
}

func isString(v ojson.Value, want string) bool {
	s, ok := v.AsString()
	return ok && s == want
}

// responsesPayload builds the response object the reference's adapter serves for Responses
// (docs/TOKENS.md §1.5, Responses dialect): the output items of clientResp, the response object
// the client received (the record's), with the token bundle, read from vLLM's own answer held by
// tw, on the last one.
func (a *adapterCall) responsesPayload(tw *tokenWriter, clientResp []byte) (servedAnswer, string, error) {
	raw := tw.original
	if tw.sse {
		obj, ok := tw.sc.Response()
		if !ok {
			return servedAnswer{}, semconv.TokensCauseStream, errors.New("the stream has no response object (no response.completed event)")
		}
		raw = obj
	}
	resp, err := ojson.ParseLazy(raw)
	if err != nil {
		resp, err = readAnswer(raw) // json.loads' reading (answerread.go)
	}
	if err != nil {
		return servedAnswer{}, semconv.TokensCauseNotAnObject, fmt.Errorf("the answer is not JSON: %w", err)
	}
	if resp.Kind() != ojson.KindObject {
		return servedAnswer{}, semconv.TokensCauseNotAnObject, errors.New("the answer is not a JSON object")
	}
	ids, err := responsesTokenIDs(resp)
	if err != nil {
		return servedAnswer{}, adapterCause(err), err
	}
	if ids, err = a.choose(ids); err != nil {
		return servedAnswer{}, adapterCause(err), err
	}
	client, err := ojson.Parse(clientResp)
	if err != nil || client.Kind() != ojson.KindObject {
		return servedAnswer{}, semconv.TokensCauseNotAnObject, errors.New("the answer the client received is not a JSON object")
	}
	output, _ := client.Get("output")
	items := slices.Clone(output.Elems())
	if len(items) == 0 || items[len(items)-1].Kind() != ojson.KindObject {
		return servedAnswer{}, semconv.TokensCauseAdapter, errors.New("vLLM's Responses answer has no output item to carry the token ids")
	}
	last := items[len(items)-1]
	var ms []ojson.Member
	for _, m := range last.Members() {
		switch m.Key {
		case "prompt_token_ids", "generation_token_ids", "generation_log_probs":
			continue
		}
		ms = append(ms, m)
	}
	model, _ := client.Get("model")
	build := func(ids *stream.TokenIDs) []byte {
		items[len(items)-1] = ojson.Object(append(slices.Clip(ms), bundleMembers(ids)...)...)
		out := ojson.Object(ojson.Member{Key: "model", Value: model}, ojson.Member{Key: "output", Value: ojson.Array(items...)})
		return out.AppendJSON(nil)
	}
	return servedAnswer{body: build(nil), ids: &ids, whole: func() []byte { return build(&ids) }}, "", nil
}

// responsesTokenIDs reads the ids of a vLLM Responses answer: the prompt ids from
// input_messages[0].tokens, the generated ids from output_messages[*].tokens, the log probs from
// the output_text parts of the message items, in order.
func responsesTokenIDs(resp ojson.Value) (stream.TokenIDs, error) {
	var ids stream.TokenIDs
	in, _ := resp.Get("input_messages")
	outs, _ := resp.Get("output_messages")
	if in.Kind() != ojson.KindArray || outs.Kind() != ojson.KindArray {
		return ids, errors.New("vLLM's Responses answer has no input_messages/output_messages although the proxy asked for enable_response_messages: a vLLM release without them, or a background request")
	}
	first := in.Elems()
	if len(first) == 0 {
		return ids, errors.New("vLLM's Responses answer has an empty input_messages")
	}
	toks, ok := first[0].Get("tokens")
	if !ok {
		return ids, errors.New("vLLM's input_messages[0] has no tokens: a Harmony model (gpt-oss) returns Harmony messages there, without token ids")
	}
	var err error
	if ids.Prompt, err = tokenIDList(toks, "input_messages[0].tokens"); err != nil {
		return ids, err
	}
	ids.HasPrompt = true
	ids.Generation = []int64{}
	for i, m := range outs.Elems() {
		t, ok := m.Get("tokens")
		if !ok {
			return ids, fmt.Errorf("vLLM's output_messages[%d] has no tokens: a Harmony model (gpt-oss) returns Harmony messages there, without token ids", i)
		}
		g, err := tokenIDList(t, fmt.Sprintf("output_messages[%d].tokens", i))
		if err != nil {
			return ids, err
		}
		ids.Generation = append(ids.Generation, g...)
	}
	ids.HasGeneration = true
	n := 0
	output, _ := resp.Get("output")
	for item := range output.Elements() {
		if t, _ := item.Get("type"); !isString(t, "message") {
			continue
		}
		content, _ := item.Get("content")
		for part := range content.Elements() {
			if t, _ := part.Get("type"); !isString(t, "output_text") {
				continue
			}
			lps, _ := part.Get("logprobs")
			for e := range lps.Elements() {
				f, id, isID, err := stream.LogProbEntry(e, n)
				if err != nil {
					return ids, fmt.Errorf("vLLM's Responses answer, output_text logprobs: %w", err)
				}
				ids.NoteLogProb(n, f, id, isID)
				n++
			}
		}
	}
	if n == 0 && len(ids.Generation) > 0 {
		return ids, errors.New("vLLM's Responses answer carries no log probs: vLLM puts them on the output_text of a message item, and this answer has none (a tool call without text); such a turn cannot be captured for training through vLLM's Responses API")
	}
	return ids, nil
}
