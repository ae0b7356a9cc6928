package proxy

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/sdk/stream"
)

var streamRestore = restoreRules{topRemove: []string{"prompt_token_ids"}, choiceRemove: []string{"token_ids"}, choiceNull: []string{"logprobs"}}

// FuzzEditAnswer: on any JSON object the edit gives valid JSON without the removed members and
// with the nulled ones null, and editing twice changes nothing more; other input is refused or
// left as it is, never a panic.
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
			tw := newTokenWriter(rec, r, 1<<20)
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
