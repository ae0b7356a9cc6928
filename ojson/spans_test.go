package ojson

import (
	"strings"
	"testing"
)

// requireSpansMatchTree fails unless the spans of ParseLazy(src), at every depth, are Parse(src)'s
// members (duplicates each in its place) or elements in order, each span's text holding the key
// and the value it names.
func requireSpansMatchTree(t *testing.T, src []byte) {
	t.Helper()
	tree, err := Parse(src)
	if err != nil {
		return
	}
	lazy, err := ParseLazy(src)
	if err != nil {
		t.Fatalf("%q: ParseLazy error %v, Parse none", src, err)
	}
	requireSpans(t, strings.TrimLeft(string(src), " \t\r\n"), tree, lazy)
}

func requireSpans(t *testing.T, text string, tree, lazy Value) {
	t.Helper()
	var spans []Span
	for sp := range lazy.Spans() {
		spans = append(spans, sp)
	}
	var want []Member
	switch tree.Kind() {
	case KindObject:
		want = tree.Members()
	case KindArray:
		for _, e := range tree.Elems() {
			want = append(want, Member{Value: e})
		}
	}
	if len(spans) != len(want) {
		t.Fatalf("%q: %d spans, want %d", text, len(spans), len(want))
	}
	for i, sp := range spans {
		if sp.Key != want[i].Key {
			t.Fatalf("%q: span %d key %q, want %q", text, i, sp.Key, want[i].Key)
		}
		if tree.Kind() == KindObject {
			// Between the key's opening quote and the value: the key, whitespace, ':', whitespace.
			between := strings.TrimRight(text[sp.KeyStart:sp.Start], " \t\r\n")
			key, err := Parse([]byte(strings.TrimSuffix(between, ":")))
			if s, _ := key.AsString(); err != nil || s != sp.Key {
				t.Fatalf("%q: span %d key text at %d reads %s (%v)", text, i, sp.KeyStart, key, err)
			}
		} else if sp.KeyStart != sp.Start {
			t.Fatalf("%q: element %d KeyStart %d, Start %d", text, i, sp.KeyStart, sp.Start)
		}
		inner := text[sp.Start:sp.End]
		got, err := Parse([]byte(inner))
		if err != nil || !got.Equal(want[i].Value) || !sp.Value.Equal(want[i].Value.CollapseDuplicates()) {
			t.Fatalf("%q: span %d text %q (%v), want %s", text, i, inner, err, want[i].Value)
		}
		if strings.Trim(inner, " \t\r\n") != inner {
			t.Fatalf("%q: span %d text %q has whitespace around it", text, i, inner)
		}
		requireSpans(t, inner, want[i].Value, sp.Value)
	}
}

func TestSpansMatchTree(t *testing.T) {
	for _, src := range lazyCases() {
		requireSpansMatchTree(t, []byte(src))
	}
	for _, src := range []string{`{"a:b" : 1, "c\":" :{"d:":[":"]}}`, " \n{ \"a\" :\t[ 1 , { \"b\" : 2 } ] ,\"a\":3 , \"c\" : \"x\\\"y\" }", `[ [ ] , { } , "" ]`} {
		requireSpansMatchTree(t, []byte(src))
	}
}

func TestSpansOfBuiltValuesAreEmpty(t *testing.T) {
	built, err := Parse([]byte(`{"a":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	scalar, _ := ParseLazy([]byte(`"s"`))
	for _, v := range []Value{built, Object(Member{Key: "a", Value: Int(1)}), Array(Int(1)), scalar, Null()} {
		for sp := range v.Spans() {
			t.Fatalf("%s: span %+v", v, sp)
		}
	}
}

func FuzzSpans(f *testing.F) {
	for _, src := range lazyCases() {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		requireSpansMatchTree(t, src)
	})
}

func TestGetEachIsGet(t *testing.T) {
	keys := []string{"a", "b", "missing", "a"}
	for _, src := range append(lazyCases(), `{"a":1,"b":{"c":2},"a":[3]}`, `{"b":null}`, `[{"a":1}]`) {
		tree, err := Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		lazy, err := ParseLazy([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []Value{tree, lazy} {
			vals, oks := make([]Value, len(keys)), make([]bool, len(keys))
			vals[2], oks[2] = Int(9), true // overwritten
			v.GetEach(keys, vals, oks)
			for i, k := range keys {
				want, ok := v.Get(k)
				if oks[i] != ok || !vals[i].Equal(want) {
					t.Fatalf("%q: GetEach %q = %s %v, Get %s %v", src, k, vals[i], oks[i], want, ok)
				}
			}
		}
	}
}

func BenchmarkGetEach(b *testing.B) {
	v, err := ParseLazy([]byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1760000000,"model":"m","choices":[{"index":0,"delta":{"content":"The"},"logprobs":{"content":[{"token":"The","logprob":-0.7105,"bytes":[84,104,101],"top_logprobs":[]}]},"finish_reason":null,"token_ids":[76830]}]}`))
	if err != nil {
		b.Fatal(err)
	}
	keys := []string{"prompt_token_ids", "choices", "usage"}
	var vals [3]Value
	var oks [3]bool
	b.ReportAllocs()
	for b.Loop() {
		v.GetEach(keys, vals[:], oks[:])
	}
}
