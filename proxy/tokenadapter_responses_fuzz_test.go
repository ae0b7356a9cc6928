package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
)

// FuzzResponsesRestore: on any JSON object, the Responses restore (a JSON answer, a stream event)
// gives valid JSON whose restored members are what vLLM writes when not asked (input_messages,
// output_messages, top_logprobs null; no output_text keeps a non-empty logprobs list), and
// restoring twice changes nothing more; other input is refused, never a panic.
func FuzzResponsesRestore(f *testing.F) {
	f.Add([]byte(`{"id":"r","output":[{"type":"message","content":[{"type":"output_text","text":"a","logprobs":[{"token":"a","logprob":-0.1}]}]}],"top_logprobs":0,"input_messages":[{"tokens":[1]}],"output_messages":[{"tokens":[2]}]}`))
	f.Add([]byte(`{"type":"response.output_text.delta","delta":"a","logprobs":[{"token":"a","logprob":-0.5,"top_logprobs":[]}]}`))
	f.Add([]byte(`{"type":"response.content_part.added","part":{"type":"output_text","text":"","logprobs":[{"x":1}]}}`))
	f.Add([]byte(`{"type":"response.completed","response":{"top_logprobs":3,"output":[{"content":[{"type":"output_text","logprobs":[1]}]},5],"input_messages":null}}`))
	f.Add([]byte(`{ "output" : [ { "content" : [ { "type" : "output_text" , "logprobs" : [ 1 ] } ] } ] , "output" : 1 }`))
	rules := responsesRestore{messages: true, logprobs: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ojson.ParseLazy(b)
		if err != nil || v.Kind() != ojson.KindObject {
			_, err := editAnswer(b, restoreRules{responses: rules})
			assert.Error(t, err, "%q is not a JSON object", b)
			return
		}
		answer, err := editAnswer(b, restoreRules{responses: rules})
		require.NoError(t, err)
		event := applyEdits(nil, b, responsesEventEdits(b, v, rules))
		_, err = ojson.ParseLazy(answer)
		require.NoError(t, err, "restore of %q gave %q", b, answer)
		again, err := editAnswer(answer, restoreRules{responses: rules})
		require.NoError(t, err)
		assert.Equal(t, string(answer), string(again), "restoring twice changes nothing more")
		e, err := ojson.ParseLazy(event)
		require.NoError(t, err, "event restore of %q gave %q", b, event)
		assert.Equal(t, string(event), string(applyEdits(nil, event, responsesEventEdits(event, e, rules))), "restoring an event twice changes nothing more")
		// The answer: no restored member keeps a value.
		w, _ := ojson.Parse(answer)
		for _, k := range []string{"input_messages", "output_messages", "top_logprobs"} {
			if x, ok := w.Get(k); ok && !hasDuplicates(w) {
				assert.True(t, x.IsNull(), "%s restored in %q", k, answer)
			}
		}
		if !hasDuplicates(w) {
			out, _ := w.Get("output")
			for _, it := range out.Elems() {
				c, _ := it.Get("content")
				for _, p := range c.Elems() {
					typ, _ := p.Get("type")
					lp, _ := p.Get("logprobs")
					if isString(typ, "output_text") && lp.Kind() == ojson.KindArray {
						assert.True(t, lp.IsEmpty(), "output_text logprobs restored in %q", answer)
					}
				}
			}
		}
	})
}
