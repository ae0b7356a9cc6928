package proxy

import (
	"bytes"
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/sdk/stream"
	"github.com/gymtrace/gymtrace/tokens"
)

var streamRestore = restoreRules{topRemove: []string{"prompt_token_ids"}, choiceRemove: []string{"token_ids"}, choiceNull: []string{"logprobs"}}

// FuzzEditAnswer: on any JSON object the edit gives valid JSON without the removed members and
// with the nulled ones null, the same bytes as the lenient reader's edit, and editing twice changes
// nothing more; other input is refused or left as it is, never a panic.
func FuzzEditAnswer(f *testing.F) {
	f.Add([]byte(`{"id":"c","choices":[{"index":0,"logprobs":{"content":[]},"token_ids":[1,2]}],"prompt_token_ids":[3]}`))
	f.Add([]byte(`{"prompt_token_ids":[1],"choices":[{"token_ids":[1],"prompt_token_ids":[2]},{"token_ids":null}]}`))
	f.Add([]byte(`{ "choices" : [ { "token_ids" : [ 1 ] , "x" : 1 } ] , "prompt_token_ids" : null }`))
	f.Add([]byte(`{"choices":"x","prompt_token_ids":1,"prompt_token_ids":2}`))
	f.Add([]byte(`[1]`))
	rules := []restoreRules{streamRestore, {topNull: []string{"prompt_token_ids"}, choiceNull: []string{"token_ids", "logprobs"}},
		{choiceRemove: []string{"token_ids", "prompt_token_ids"}, choiceNull: []string{"logprobs"}}}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, r := range rules {
			out, err := editAnswer(b, r)
			if err != nil {
				continue
			}
			v, perr := ojson.Parse(b)
			if perr != nil || v.Kind() != ojson.KindObject {
				continue
			}
			// Strict JSON is edited from its one validating pass; the lenient reading of other
			// text edits it the same way.
			lenient, err := editLenient(b, b, r)
			require.NoError(t, err, "%q", b)
			require.Equal(t, string(lenient), string(out), "%q", b)
			w, err := ojson.Parse(out)
			require.NoError(t, err, "edit of %q gave %q", b, out)
			check := func(o ojson.Value, remove, null []string) {
				for _, k := range remove {
					_, ok := o.Get(k)
					assert.False(t, ok, "%s removed from %q", k, out)
				}
				for _, k := range null {
					if x, ok := o.Get(k); ok {
						assert.True(t, x.IsNull(), "%s nulled in %q", k, out)
					}
				}
			}
			if !hasDuplicates(w) {
				check(w, r.topRemove, r.topNull)
				if cs, ok := w.Get("choices"); ok && cs.Kind() == ojson.KindArray {
					for _, c := range cs.Elems() {
						if c.Kind() == ojson.KindObject {
							check(c, r.choiceRemove, r.choiceNull)
						}
					}
				}
				again, err := editAnswer(out, r)
				require.NoError(t, err)
				assert.Equal(t, string(out), string(again))
			}
		}
	})
}

// hasDuplicates reports a repeated key in the object or its choices (the edit touches the first).
func hasDuplicates(v ojson.Value) bool {
	dup := func(o ojson.Value) bool {
		seen := map[string]bool{}
		for _, m := range o.Members() {
			if seen[m.Key] {
				return true
			}
			seen[m.Key] = true
		}
		return false
	}
	if dup(v) {
		return true
	}
	cs, _ := v.Get("choices")
	for _, c := range cs.Elems() {
		if c.Kind() == ojson.KindObject && dup(c) {
			return true
		}
	}
	return false
}

// FuzzTokenWriterSSE: an SSE answer split at any point passes through the editor with every byte
// outside the edited data kept; without rules it is passed on unchanged.
func FuzzTokenWriterSSE(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":{\"content\":[]},\"token_ids\":[1]}],\"prompt_token_ids\":[2]}\n\ndata: [DONE]\n\n"), uint8(7))
	f.Add([]byte("event: x\r\ndata: {}\r\n\r\n: comment\n\ndata: {\"a\":1}\n"), uint8(3))
	f.Add([]byte("data: {\"a\"\ndata: :1}\n\n"), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, cut uint8) {
		for _, r := range []restoreRules{{}, streamRestore} {
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", "text/event-stream")
			tw := newTokenWriter(rec, r, stream.DialectChat, 1<<20, 0)
			at := int(cut) % (len(body) + 1)
			_, _ = tw.Write(body[:at])
			_, _ = tw.Write(body[at:])
			tw.finish(true)
			got := rec.Body.Bytes()
			if r.empty() {
				assert.Equal(t, string(body), string(got))
				continue
			}
			// Every line that is not a data line is kept as it is, in order.
			assert.Equal(t, string(nonData(body)), string(nonData(got)))
		}
	})
}

func nonData(b []byte) []byte {
	var out []byte
	for line := range bytes.SplitAfterSeq(b, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("data:")) {
			out = append(out, line...)
		}
	}
	return out
}

// FuzzTokenAccumulator: any sequence of data never panics, and a result's arrays are the ones fed.
func FuzzTokenAccumulator(f *testing.F) {
	f.Add([]byte(`{"choices":[{"index":0,"token_ids":[1],"logprobs":{"content":[{"token":"token_id:1","logprob":-1}]}}],"prompt_token_ids":[5]}`), []byte("[DONE]"))
	f.Add([]byte(`{"choices":[{"index":1}]}`), []byte(`{"prompt_token_ids":"x"}`))
	f.Add([]byte(`{"choices":[{"logprobs":{"content":[1]}}]}`), []byte(`[DONE]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var acc stream.TokenAccumulator
		acc.Feed(a)
		acc.Feed(b)
		ids, err := acc.Result()
		if err == nil {
			assert.Len(t, ids.LogProbTokenID, len(ids.LogProbs))
		}
	})
}

// vllmStreamRestore is what the vLLM adapter restores in a stream for a client that asked for no
// token members (tokenadapter.go): the explicit nulls, and the held-back tokens' empty-delta chunks
// dropped.
var vllmStreamRestore = restoreRules{topNull: []string{"prompt_token_ids"}, choiceNull: []string{"logprobs", "token_ids"}, dropEmptyDelta: true}

// sseEvents splits an SSE body as the editor does: each event ends with its blank line ("\n" or
// "\r\n"); the rest is the last, incomplete event ("" when there is none).
func sseEvents(b []byte) (events [][]byte, rest []byte) {
	start := 0
	for i := 0; i < len(b); {
		nl := bytes.IndexByte(b[i:], '\n')
		if nl < 0 {
			break
		}
		line := b[i : i+nl]
		i += nl + 1
		if len(line) == 0 || (len(line) == 1 && line[0] == '\r') {
			events = append(events, b[start:i])
			start = i
		}
	}
	return events, b[start:]
}

// editSSE runs body through a tokenWriter with rules r, written in pieces ending at cuts, and
// returns what the client received.
func editSSE(body []byte, r restoreRules, cuts []byte) []byte {
	out, _ := runSSE(body, r, cuts)
	return out
}

// runSSE is editSSE that also returns the finished tokenWriter.
func runSSE(body []byte, r restoreRules, cuts []byte) ([]byte, *tokenWriter) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "text/event-stream")
	tw := newTokenWriter(rec, r, stream.DialectChat, 1<<20, 0)
	at := 0
	for _, c := range cuts {
		end := min(at+int(c), len(body))
		_, _ = tw.Write(body[at:end])
		at = end
	}
	_, _ = tw.Write(body[at:])
	tw.finish(true)
	return rec.Body.Bytes(), tw
}

// FuzzSSEEventEditor: the SSE editor of a token-captured stream (docs/TOKENS.md §0 T2) gives the
// same bytes however the upstream's reads split the stream; it drops whole events only (vLLM's
// empty-delta chunks), and in every other event changes the data lines alone: every other line,
// comments and event names included, even when they hold the same text as the data, is kept byte
// for byte; an edited event's data (its data lines joined, SSE's reading) is an object with the
// restored members null; and editing the output again changes nothing.
func FuzzSSEEventEditor(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":{\"content\":[]},\"finish_reason\":null,\"token_ids\":[1]}],\"prompt_token_ids\":[2]}\n\n"+
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":null,\"token_ids\":[]}]}\n\n"+
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":null},\"finish_reason\":null,\"token_ids\":[3]}]}\n\ndata: [DONE]\n\n"), []byte{5, 40, 1, 90})
	// A comment that holds the data's own text, before the data line.
	f.Add([]byte(": {\"prompt_token_ids\":[1]}\ndata: {\"prompt_token_ids\":[1]}\n\n"), []byte{3})
	f.Add([]byte("event: chunk\r\ndata:{\"choices\":[{\"token_ids\":[7],\"logprobs\":{}}]}\r\n\r\n: keep-alive\n\n"), []byte{0, 0, 17})
	f.Add([]byte("data: {\"a\"\ndata: :1}\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\npartial"), []byte{2})
	// One chunk over several data lines, the injected members on and across the join points.
	f.Add([]byte("id: 1\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\n: c\ndata: \"token_ids\":[1,\ndata:2]}],\"prompt_token_ids\":\ndata: [3]}\n\n"), []byte{9})
	f.Fuzz(func(t *testing.T, body, cuts []byte) {
		for _, r := range []restoreRules{vllmStreamRestore, streamRestore} {
			got := editSSE(body, r, cuts)
			require.Equal(t, string(editSSE(body, r, nil)), string(got), "the split of the reads does not matter")

			in, inRest := sseEvents(body)
			out, outRest := sseEvents(got)
			assert.Equal(t, string(inRest), string(outRest), "the incomplete last event is passed on as received")
			j := 0
			for _, ev := range in {
				data, n := eventData(ev)
				if r.dropEmptyDelta && n > 0 && emptyDeltaChunk(data) {
					continue // dropped whole
				}
				require.Less(t, j, len(out), "event %q is kept", ev)
				o := out[j]
				j++
				assert.Equal(t, string(withoutData(ev)), string(withoutData(o)), "only the data lines change")
				od, _ := eventData(o)
				if bytes.Equal(data, od) {
					assert.Equal(t, string(ev), string(o))
					continue
				}
				v, err := ojson.Parse(od)
				if err != nil {
					// Text strict JSON refuses (text after the object, say) is edited leniently.
					_, inErr := ojson.Parse(data)
					require.Error(t, inErr, "an edited event's data is JSON when the upstream's was: %q", od)
					continue
				}
				if !hasDuplicates(v) {
					checkRestored(t, v, r)
				}
			}
			assert.Equal(t, len(out), j, "no event is added")
			assert.Equal(t, string(got), string(editSSE(got, r, nil)), "editing again changes nothing")
		}
	})
}

// eventData returns an event's data as an SSE client reads it (its data lines' values joined by
// LF) and how many data lines it has.
func eventData(ev []byte) ([]byte, int) {
	var data []byte
	n := 0
	for line := range bytes.SplitAfterSeq(ev, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("data:")) {
			if n > 0 {
				data = append(data, '\n')
			}
			data, n = append(data, sseData(line)...), n+1
		}
	}
	return data, n
}

// withoutData is an event with its data lines left out.
func withoutData(ev []byte) []byte {
	var out []byte
	for line := range bytes.SplitAfterSeq(ev, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("data:")) {
			out = append(out, line...)
		}
	}
	return out
}

// checkRestored checks the rules' members in an edited answer: removed ones absent, nulled ones
// null, at the top and in each choice.
func checkRestored(t *testing.T, v ojson.Value, r restoreRules) {
	t.Helper()
	check := func(o ojson.Value, remove, null []string) {
		for _, k := range remove {
			_, ok := o.Get(k)
			assert.False(t, ok, "%s removed", k)
		}
		for _, k := range null {
			if x, ok := o.Get(k); ok {
				assert.True(t, x.IsNull(), "%s nulled", k)
			}
		}
	}
	check(v, r.topRemove, r.topNull)
	if cs, ok := v.Get("choices"); ok && cs.Kind() == ojson.KindArray {
		for _, c := range cs.Elems() {
			if c.Kind() == ojson.KindObject {
				check(c, r.choiceRemove, r.choiceNull)
			}
		}
	}
}

// FuzzAdapterExtract: the token-field reader of a held vLLM or SGLang answer (docs/TOKENS.md §1.5
// steps 1–3, §7) never panics on any JSON; ids it accepts have one log prob per generated id,
// and the payload it serves the sink carries exactly those ids into the token entry.
func FuzzAdapterExtract(f *testing.F) {
	f.Add([]byte(`{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a"},"logprobs":{"content":[{"token":"token_id:5","logprob":-0.5}]},"token_ids":[5]}],"prompt_token_ids":[1,2]}`))
	f.Add([]byte(`{"choices":[{"message":{"content":"a","prompt_token_ids":[1],"generation_token_ids":[2],"generation_log_probs":[-1]},"token_ids":[2]}],"prompt_token_ids":[1]}`))
	f.Add([]byte(`{"choices":[{"message":{"prompt_token_ids":[1]},"logprobs":{"content":[{"token":"a","logprob":0}]}}]}`))
	f.Add([]byte(`{"choices":[{"logprobs":{"content":[{"token":"token_id:9","logprob":-1e-7},{"token":"token_id:x","logprob":1}]}}]}`))
	f.Add([]byte(`{"choices":[{"prompt_token_ids":[1,2],"token_ids":[3],"logprobs":{"content":[{"token":"x","logprob":-2}]}}]}`))
	f.Add([]byte(`{"choices":[{"token_ids":[1e400],"logprobs":null}],"prompt_token_ids":[true]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := ojson.Parse(body)
		if err != nil || resp.Kind() != ojson.KindObject {
			return
		}
		lazy, err := ojson.ParseLazy(body)
		require.NoError(t, err)
		for _, src := range []TokenSource{TokenSourceVLLM, TokenSourceSGLang} {
			a := &adapterCall{source: src}
			ids, err := a.extract(resp)
			// The proxy reads the answer lazily (readAnswerLazy): the same ids, the same error
			// (which shows a member with duplicate keys as a dict holds it, as the lazy reading does).
			lazyIDs, lazyErr := a.extract(lazy)
			_, collapsedErr := a.extract(resp.CollapseDuplicates())
			assert.Equal(t, fmt.Sprint(collapsedErr), fmt.Sprint(lazyErr), "%s: %s", src, body)
			assert.Equal(t, err == nil, lazyErr == nil, "%s: %s", src, body)
			if err != nil {
				assert.NotEmpty(t, err.Error())
				continue
			}
			assert.Equal(t, ids, lazyIDs, "%s: %s", src, body)
			require.Len(t, ids.LogProbs, len(ids.Generation), "%s: %s", src, body)
			if !ids.HasPrompt {
				continue // the prompt comes from /tokenize
			}
			// captureServed (the payload without its lists) has CaptureTokens' outcome on the whole
			// payload, and writes the same entry.
			whole := servedPayload(resp, &ids)
			var sinks [2]memSink
			calls := [2]tokens.Call{{RolloutID: "r0", ModelCallID: "c1", Sink: &sinks[0]}, {RolloutID: "r0", ModelCallID: "c1", Sink: &sinks[1]}}
			outs := [2]tokens.Outcome{
				calls[0].CaptureTokens(whole, time.Unix(1, 0)),
				captureServed(&calls[1], servedAnswer{body: servedPayload(lazy, nil), ids: &ids, whole: func() []byte { return whole }}, time.Unix(1, 0)),
			}
			assert.Equal(t, [2]any{outs[0].Written, outs[0].Cause}, [2]any{outs[1].Written, outs[1].Cause}, "%s: %s", src, body)
			assert.Equal(t, outs[0].Reason, outs[1].Reason)
			assert.Equal(t, sinks[0].marks, sinks[1].marks)
			require.Len(t, sinks[1].entries, len(sinks[0].entries))
			for i := range sinks[0].entries {
				l0, err0 := sinks[0].entries[i].CanonicalJSON()
				l1, err1 := sinks[1].entries[i].CanonicalJSON()
				assert.Equal(t, string(l0), string(l1), "%s: %s", src, body)
				assert.Equal(t, err0, err1)
			}
			payload, err := ojson.Parse(whole)
			require.NoError(t, err)
			e, err := tokens.EntryFromResponse(payload, "r0", "c1", "m", time.Unix(1, 0))
			if err != nil {
				// Only a log prob JSON cannot hold (NaN, ±Inf) is refused, never the ids.
				assert.True(t, slices.ContainsFunc(ids.LogProbs, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }), "%s: %v", body, err)
				continue
			}
			assert.Equal(t, ids.Prompt, e.PromptTokenIDs)
			assert.Equal(t, ids.Generation, e.GenerationTokenIDs)
			assert.Equal(t, ids.LogProbs, e.GenerationLogProbs)
		}
	})
}

// FuzzUpstreamReassembly: the reassembly of the upstream's own stream, which the editor feeds
// some events as edited (the restore rules' members, which the chat reassembly never reads, set to
// null or removed), is the reassembly of the stream as received, however the reads split it.
func FuzzUpstreamReassembly(f *testing.F) {
	f.Add([]byte("data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":{\"content\":[]},\"finish_reason\":null,\"token_ids\":[1]}],\"prompt_token_ids\":[2]}\n\n"+
		"data: {\"model\":\"m2\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":null,\"token_ids\":[]}]}\n\n"+
		"data: {\"choices\":[{\"index\":1,\"delta\":{\"reasoning_content\":null},\"finish_reason\":null}]}\n\n"+
		"data: {\"choices\":[{\"delta\":{\"content\":\"hi\",\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"token_ids\":[3],\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":1}}\n\ndata: [DONE]\n\n"), []byte{5, 40, 1, 90})
	f.Add([]byte("data: {\"a\":1,\r\"token_ids\":[1],\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n: c\r\n\r\ndata:{\"choices\":[{\"logprobs\":{},\"delta\":{\"content\":\"y\"}}],\"prompt_token_ids\":null}\r\n\r\n"), []byte{3})
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"\\u00e9\"},\"logprobs\":1}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\npartial"), []byte{0, 7})
	// A lone CR (a line end for SSE, whitespace for JSON) inside the member an edit removes.
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\r\"prompt_token_ids\":[1]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"y\"},\r\"logprobs\":{}}]}\n\n"), []byte{})
	f.Fuzz(func(t *testing.T, body, cuts []byte) {
		want, err := stream.NewCapture(stream.DialectChat)
		require.NoError(t, err)
		want.Feed(body)
		wantObj, wantOK := want.Response()
		for _, r := range []restoreRules{vllmStreamRestore, streamRestore} {
			_, tw := runSSE(body, r, cuts)
			obj, ok := tw.sc.Response()
			require.Equal(t, wantOK, ok)
			require.Equal(t, string(wantObj), string(obj))
		}
	})
}

// TestRestoreRulesUnread: every rule set the adapters build edits only members the chat
// reassembly does not read (so the upstream's reassembly may read edited events); a rule on a
// member it reads is not.
func TestRestoreRulesUnread(t *testing.T) {
	req, err := ojson.Parse([]byte(`{"model":"m","stream":true,"messages":[]}`))
	require.NoError(t, err)
	for _, src := range []TokenSource{TokenSourceVLLM, TokenSourceSGLang} {
		for _, fromLogprobs := range []bool{false, true} {
			if a := newAdapterCall(src, fromLogprobs, "chat", req); a != nil {
				assert.True(t, a.restore.unread(), "%s %v: %+v", src, fromLogprobs, a.restore)
			}
		}
	}
	assert.True(t, vllmStreamRestore.unread())
	assert.True(t, streamRestore.unread())
	assert.False(t, restoreRules{topRemove: []string{"usage"}}.unread())
	assert.False(t, restoreRules{topNull: []string{"model"}}.unread())
	assert.False(t, restoreRules{choiceNull: []string{"delta"}}.unread())
	assert.False(t, restoreRules{choiceRemove: []string{"finish_reason"}}.unread())
}
