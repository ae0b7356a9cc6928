package ojson

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parserDocs are documents of every shape, valid and not, for the Parser tests.
var parserDocs = []string{
	`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
	`{"usage":{"prompt_tokens":8,"completion_tokens":2,"details":{"a":[1,2,{"b":[]}]}}}`,
	`[1,"two",[3,[4,[5]]],{"six":6,"six":7}]`,
	`{"a":1,"b":[true,false,null],"c":"\u00e9\n"}`,
	`{"big":[` + strings.Repeat(`{"k":"v"},`, 300) + `{}]}`,
	`{"unterminated":[1,2,{"x":`, `{"a":1}}`, `"just a string"`, `123`, `[]`, `{}`,
	`{"wide":{` + strings.Repeat(`"k":0,`, 200) + `"end":1}}`,
}

// TestParserMatchesParse parses documents in random order with one Parser and checks every result
// against Parse; results kept with Clone stay unchanged by later calls.
func TestParserMatchesParse(t *testing.T) {
	var p Parser
	r := rand.New(rand.NewPCG(11, 12))
	type kept struct {
		v    Value
		want string
	}
	var keep []kept
	for range 2000 {
		doc := []byte(parserDocs[r.IntN(len(parserDocs))])
		want, wantErr := Parse(doc)
		got, err := p.Parse(doc)
		if wantErr != nil {
			require.Error(t, err, "%s", doc)
			assert.True(t, sameSyntaxError(err, wantErr), "%v vs %v", err, wantErr)
			continue
		}
		require.NoError(t, err, "%s", doc)
		require.True(t, want.Equal(got), "%s: Parser %s, Parse %s", doc, got, want)
		if r.IntN(10) == 0 {
			keep = append(keep, kept{got.Clone(), want.String()})
		}
	}
	require.NotEmpty(t, keep)
	for _, k := range keep {
		assert.Equal(t, k.want, k.v.String())
	}
}

// TestParserOverwritesUnclonedResults documents the contract: the next call reuses the memory of a
// result that was not cloned; the clone is unaffected.
func TestParserOverwritesUnclonedResults(t *testing.T) {
	var p Parser
	first, err := p.Parse([]byte(`{"a":{"b":1}}`))
	require.NoError(t, err)
	kept := first.Clone()
	_, err = p.Parse([]byte(`{"x":{"y":2}}`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":{"b":1}}`, kept.String())
	assert.NotEqual(t, `{"a":{"b":1}}`, first.String(), "the uncloned result's members were reused")
}

// TestParserAppendDoesNotWriteIntoSlab checks that the slices a Parser hands out have no spare
// capacity: Set and append on a result reallocate instead of overwriting a neighbour.
func TestParserAppendDoesNotWriteIntoSlab(t *testing.T) {
	var p Parser
	v, err := p.Parse([]byte(`[{"a":1},{"b":2}]`))
	require.NoError(t, err)
	first := v.Elems()[0]
	first.Set("c", Int(3))
	assert.Equal(t, `[{"a":1},{"b":2}]`, v.String())
	assert.Equal(t, `{"a":1,"c":3}`, first.String())
}

func TestParserAllocations(t *testing.T) {
	doc := []byte(parserDocs[0])
	var p Parser
	_, err := p.Parse(doc) // warm up: stacks and slabs
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := p.Parse(doc); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 1.0, "only the input copy the strings share")
}

func TestParserKeepsBoundedMemory(t *testing.T) {
	var p Parser
	huge := `[` + strings.Repeat(`{"k":[1,2]},`, 5000) + `{}]`
	_, err := p.Parse([]byte(huge))
	require.NoError(t, err)
	_, err = p.Parse([]byte(`{}`))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(p.vals.chunks), parserKeep/slabChunk)
	assert.LessOrEqual(t, len(p.mems.chunks), parserKeep/slabChunk)
	assert.LessOrEqual(t, cap(p.vstack), parserKeep)
	assert.LessOrEqual(t, cap(p.mstack), parserKeep)
	p.Release()
	v, err := p.Parse([]byte(`{"after":"release"}`))
	require.NoError(t, err)
	assert.Equal(t, `{"after":"release"}`, v.String())
}

func FuzzParser(f *testing.F) {
	for _, d := range parserDocs {
		f.Add([]byte(d), []byte(parserDocs[0]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var p Parser
		va, errA := p.Parse(a)
		want := va.Clone()
		wantA, werrA := Parse(a)
		if (errA == nil) != (werrA == nil) || (errA != nil && !sameSyntaxError(errA, werrA)) {
			t.Fatalf("Parser err %v, Parse err %v", errA, werrA)
		}
		if errA == nil && !wantA.Equal(want) {
			t.Fatalf("Parser %s, Parse %s", want, wantA)
		}
		vb, errB := p.Parse(b)
		wantB, werrB := Parse(b)
		if (errB == nil) != (werrB == nil) || (errB == nil && !wantB.Equal(vb)) {
			t.Fatalf("second document: Parser %s (%v), Parse %s (%v)", vb, errB, wantB, werrB)
		}
		if errA == nil && !wantA.Equal(want) {
			t.Fatalf("clone of the first result changed: %s vs %s", want, wantA)
		}
	})
}

func BenchmarkParser(b *testing.B) {
	var p Parser
	b.ReportAllocs()
	b.SetBytes(int64(len(benchDoc)))
	for b.Loop() {
		if _, err := p.Parse(benchDoc); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHugeNumberErrorIsShort: a number outside the ranges is quoted in its error only up to a
// bound, whatever its length (from a fresh-user trial: a 10 MiB integer gave a 10 MiB message).
func TestHugeNumberErrorIsShort(t *testing.T) {
	huge := strings.Repeat("9", 10<<20)
	for _, in := range []string{huge, "1e" + huge, `{"a":` + huge + `}`, "[" + huge + "]"} {
		_, err := Parse([]byte(in))
		require.Error(t, err)
		assert.Less(t, len(err.Error()), 200, "Parse")
		assert.Contains(t, err.Error(), "… (1048576")
		_, err = Compact(nil, []byte(in))
		require.Error(t, err)
		assert.Less(t, len(err.Error()), 200, "Compact")
		_, err = ParseLazy([]byte(in))
		require.Error(t, err)
		assert.Less(t, len(err.Error()), 200, "ParseLazy")
	}
	_, err := Parse([]byte("18446744073709551616"))
	assert.EqualError(t, err, "ojson: integer 18446744073709551616 outside the 64-bit range at offset 0")
}
