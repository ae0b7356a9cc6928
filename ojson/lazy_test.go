package ojson

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// lazyCases are documents whose raw reading must equal the tree: duplicates at every depth,
// every escape (the ones orjson writes and the ones it does not), whitespace everywhere,
// objects past the 16 keys compared pairwise, with and without a duplicate.
func lazyCases() []string {
	many := func(dup bool) string {
		var b strings.Builder
		b.WriteString(`{`)
		for i := range 40 {
			fmt.Fprintf(&b, `"k%d":[%d,{"a":1,"a":2}],`, i, i)
		}
		if dup {
			b.WriteString(`"k\u0033":"last",`)
		}
		b.WriteString(`"end":{}}`)
		return b.String()
	}
	return []string{
		`{}`, `[]`, `{"a":1}`, `[1,"x",true,false,null,-0,1.5e3,{}]`, `"s"`, `12`, `null`,
		` { "a" : [ 1 , 2 ] , "b" : { } } `, "[\n]", `{"a":{"b":{"c":[[[]]]}}}`,
		`{"a":1,"b":2,"a":3}`, `{"x":{"a":1,"a":{"b":1,"b":2}},"x":[{"c":1,"c":2}]}`,
		`{"a":1,"\u0061":2}`, `{"\n":1,"\u000a":2}`, `{"é":1,"\u00e9":2}`,
		`["\"\\\b\f\n\r\t\u0000\u001f\u007f"]`, `["\u001F"]`, `["\/"]`, `["\u00e9"]`, `["\u000a"]`,
		`["\ud83d\ude00"]`, `["é\u2028😀"]`, `{"k":"v\u0008"}`, `{"\u0000":"\u0001"}`,
		many(false), many(true),
		`{"usage":{"prompt_tokens":1},"choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]}}]}`,
	}
}

// requireLazyMatchesTree fails unless ParseLazy(src) reads like Parse(src).CollapseDuplicates():
// the same verdict, encoding, accessors at every depth, and EncodedText exactly when the text is
// the encoding.
func requireLazyMatchesTree(t *testing.T, src []byte) {
	t.Helper()
	tree, wantErr := Parse(src)
	lazy, err := ParseLazy(src)
	if errorCategory(err) != errorCategory(wantErr) {
		t.Fatalf("%q: ParseLazy error %v, Parse %v", src, err, wantErr)
	}
	if err != nil {
		return
	}
	tree = tree.CollapseDuplicates()
	want := tree.AppendJSON(nil)
	if got := lazy.AppendJSON(nil); string(got) != string(want) {
		t.Fatalf("%q: AppendJSON %s, want %s", src, got, want)
	}
	text, ok := lazy.EncodedText()
	trimmed := strings.Trim(string(src), " \t\r\n")
	isContainer := tree.Kind() == KindArray || tree.Kind() == KindObject
	if wantOK := isContainer && trimmed == string(want); ok != wantOK || (ok && string(text) != trimmed) {
		t.Fatalf("%q: EncodedText %q %v, want %v (encoding %s)", src, text, ok, wantOK, want)
	}
	if !lazy.Equal(tree) || !tree.Equal(lazy) {
		t.Fatalf("%q: Equal is false", src)
	}
	requireSameReading(t, string(src), tree, lazy)
}

// requireSameReading compares every accessor of lazy with tree's, recursively.
func requireSameReading(t *testing.T, src string, tree, lazy Value) {
	t.Helper()
	if tree.Kind() != lazy.Kind() || tree.IsEmpty() != lazy.IsEmpty() || tree.Len() != lazy.Len() ||
		tree.IsEmpty() != (tree.Len() == 0 && tree.Kind() >= KindString) {
		t.Fatalf("%q: %s: kind/IsEmpty/Len %v %v %d, tree %v %v %d", src, tree, lazy.Kind(), lazy.IsEmpty(), lazy.Len(),
			tree.Kind(), tree.IsEmpty(), tree.Len())
	}
	if got, want := lazy.SizeHint() > 0, tree.SizeHint() > 0; got != want {
		t.Fatalf("%q: SizeHint", src)
	}
	switch tree.Kind() {
	case KindString, KindNumber, KindBool, KindNull:
		if !tree.Equal(lazy) {
			t.Fatalf("%q: scalar %s, tree %s", src, lazy, tree)
		}
	case KindArray:
		var got []Value
		for e := range lazy.Elements() {
			got = append(got, e)
		}
		elems := lazy.Elems()
		if len(got) != len(tree.Elems()) || len(elems) != len(got) {
			t.Fatalf("%q: %d elements, tree %d", src, len(got), len(tree.Elems()))
		}
		for i, e := range tree.Elems() {
			requireSameReading(t, src, e, got[i])
			requireSameReading(t, src, e, elems[i])
		}
	case KindObject:
		var keys []string
		members := lazy.Members()
		if len(members) != len(tree.Members()) {
			t.Fatalf("%q: %d members, tree %d", src, len(members), len(tree.Members()))
		}
		for i, m := range tree.Members() {
			keys = append(keys, m.Key)
			if members[i].Key != m.Key {
				t.Fatalf("%q: member %d is %q, tree %q", src, i, members[i].Key, m.Key)
			}
			requireSameReading(t, src, m.Value, members[i].Value)
			got, ok := lazy.Get(m.Key)
			if !ok {
				t.Fatalf("%q: Get(%q) found nothing", src, m.Key)
			}
			requireSameReading(t, src, m.Value, got)
		}
		if _, ok := lazy.Get("no such key"); ok {
			t.Fatalf("%q: Get of a missing key found one", src)
		}
		picked, treePicked := lazy.Pick(append(keys, "missing")...), tree.Pick(append(keys, "missing")...)
		if !picked.Equal(treePicked) || !picked.Equal(tree) {
			t.Fatalf("%q: Pick %s, tree's %s", src, picked, treePicked)
		}
		set := lazy
		set.Set("added", Int(1))
		if set.Len() != tree.Len()+1 || lazy.Len() != tree.Len() {
			t.Fatalf("%q: Set on a raw object", src)
		}
	}
	if c := lazy.Clone(); !c.Equal(tree) || !lazy.CollapseDuplicates().Equal(tree) {
		t.Fatalf("%q: Clone or CollapseDuplicates differ", src)
	}
}

// requirePythonMatchesTree fails unless PythonText(src) is ParsePython(src).AppendJSON, or fails
// as it does.
func requirePythonMatchesTree(t *testing.T, src []byte) {
	t.Helper()
	v, wantErr := ParsePython(src)
	got, err := PythonText(string(src))
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: PythonText error %v, ParsePython %v", src, err, wantErr)
	}
	if wantErr == nil && string(got) != v.String() {
		t.Fatalf("%q: PythonText %s, want %s", src, got, v)
	}
}

func TestParseLazyMatchesTree(t *testing.T) {
	for _, src := range lazyCases() {
		requireLazyMatchesTree(t, []byte(src))
		requirePythonMatchesTree(t, []byte(src))
	}
	for _, src := range []string{`[-0,-0.0,1.50,1e2,1E-5,2.5e-7,1e16,12345678901234567890123]`, ` {"a": NaN, "b": -Infinity} `,
		`{"a":1.0,"a":2.50}`, `{"x":{"a":-0,"a":1e400}}`, `[1e400]`, `{"a":"\ud800"}`, "\ufeff{}", `{`} {
		requirePythonMatchesTree(t, []byte(src))
	}
	for _, bad := range []string{``, ` `, `{`, `{"a":1,}`, `[1 2]`, `{"a" 1}`, `NaN`, `"\x"`, `["\ud800"]`, `1 2`,
		`18446744073709551616`, `1e400`, strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)} {
		requireLazyMatchesTree(t, []byte(bad))
	}
}

// Reading a field of a raw document allocates nothing for the parts it skips: a document of
// many tiny values costs what the field's value costs, not a tree node per value.
func TestParseLazyBuildsNoTree(t *testing.T) {
	doc := []byte(`{"data":[` + strings.Repeat(`0,{},[],"s",`, 1<<18) + `0],"id":"x","n":{"a":[1]}}`)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v, err := ParseLazy(doc)
	id, _ := v.Get("id")
	n := 0
	data, _ := v.Pick("data", "id").Get("data")
	for range data.Elements() {
		n++
	}
	text, ok := v.EncodedText()
	runtime.ReadMemStats(&after)
	if err != nil || id.String() != `"x"` || n != 4<<18+1 || !ok || len(text) != len(doc) {
		t.Fatalf("ParseLazy: %v %s %d %v", err, id, n, ok)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10 {
		t.Fatalf("reading a %d-byte document allocated %d bytes", len(doc), alloc)
	}
}

func FuzzParseLazy(f *testing.F) {
	for _, src := range lazyCases() {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		requireLazyMatchesTree(t, src)
		requirePythonMatchesTree(t, src)
	})
}
