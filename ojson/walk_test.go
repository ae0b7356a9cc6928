package ojson

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type visitFunc func(depth int, key, val []byte)

func (f visitFunc) Visit(depth int, key, val []byte) { f(depth, key, val) }

// walkEvents walks src with depth and returns its events as "depth key value" lines (key "-" for
// an element, value "-" at a key), the compact flag and the error.
func walkEvents(src string, depth int, suffix string) (events []string, sawSuffix, compact bool, err error) {
	w := Walker{Depth: depth, Suffix: suffix, Visitor: visitFunc(func(d int, key, val []byte) {
		k, v := "-", "-"
		if key != nil {
			k = string(key)
		}
		if val != nil {
			v = string(val)
		}
		events = append(events, fmt.Sprintf("%d %s %s", d, k, v))
	})}
	compact, err = w.CheckString(src)
	return events, w.SawSuffix, compact, err
}

// requireSameWalk walks src with the fast path for validated compact text (walkCompact) and token by
// token (compactTokens), at every visiting depth up to 3 with a suffix to watch, and fails unless
// both give the same events and suffix finding. Only a text compactWhole accepts takes the fast
// path; for any other both walks are the same one.
func requireSameWalk(t *testing.T, src []byte, maxDepth int) {
	t.Helper()
	for depth := range 4 {
		walk := func(fast bool) (events []string, saw bool, err error) {
			w := Walker{MaxDepth: maxDepth, Depth: depth, Suffix: `a"`, Visitor: visitFunc(func(d int, key, val []byte) {
				events = append(events, fmt.Sprintf("%d %q %q", d, key, val))
			})}
			if fast {
				_, _, err = compactText(&w, nil, src, maxDepth, true)
			} else {
				_, _, err = compactTokens(&w, nil, src, maxDepth, true)
			}
			return events, w.SawSuffix, err
		}
		fastEvents, fastSaw, fastErr := walk(true)
		events, saw, err := walk(false)
		if (fastErr == nil) != (err == nil) || fastSaw != saw || fmt.Sprint(fastEvents) != fmt.Sprint(events) {
			t.Fatalf("%q depth %d: fast walk %v %v %v, token walk %v %v %v", src, depth, fastEvents, fastSaw, fastErr, events, saw, err)
		}
	}
}

func TestWalkerEvents(t *testing.T) {
	events, saw, compact, err := walkEvents(`{"a":1, "b":[{"c":"x"},2],"\u0064":{"e":{"f":null}}}`, 3, `"x"`)
	require.NoError(t, err)
	assert.False(t, compact)
	assert.True(t, saw)
	assert.Equal(t, []string{
		`1 "a" -`, `1 "a" 1`,
		`1 "b" -`,
		`3 "c" -`, `3 "c" "x"`, `2 - {"c":"x"}`, `2 - 2`,
		`1 "b" [{"c":"x"},2]`,
		`1 "\u0064" -`,
		`2 "e" -`, `3 "f" -`, `3 "f" null`, `2 "e" {"f":null}`,
		`1 "\u0064" {"e":{"f":null}}`,
	}, events)

	events, saw, compact, err = walkEvents(`[{"k":"v"},[1]]`, 1, `"z"`)
	require.NoError(t, err)
	assert.True(t, compact)
	assert.False(t, saw)
	assert.Equal(t, []string{`1 - {"k":"v"}`, `1 - [1]`}, events)

	_, _, _, err = walkEvents(`{"a":1,}`, 1, "")
	assert.Error(t, err)
}

func TestWalkerSuffixSeesKeysAndEscapedQuotes(t *testing.T) {
	for src, want := range map[string]bool{
		`{"compaction":1}`:                   true,
		`{"a":"compaction"}`:                 true,
		`{"a":"say \"compaction"}`:           true,
		`{"a":"compactio\u006e"}`:            false,
		`{"a":"\"compaction\" is the word"}`: false,
		`{"a":"compactions"}`:                false,
	} {
		_, saw, _, err := walkEvents(src, 0, `"compaction"`)
		require.NoError(t, err, src)
		assert.Equal(t, want, saw, src)
		assert.Equal(t, want, bytes.Contains([]byte(src), []byte(`"compaction"`)), "the probe it replaces: %s", src)
	}
}

// FuzzWalkerMatchesCompact: a walk validates and compacts like the exported entry points, Parse and
// encoding/json (requireSameCompaction), and its suffix finding equals a text search of the
// compacted output.
func FuzzWalkerMatchesCompact(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"compaction"}]}`, ` { "x" : "y" } `, `[1,2`, `"\ud800"`, strings.Repeat("[", 30)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		const depth = 20
		requireSameCompaction(t, []byte(src), depth)
		w := Walker{MaxDepth: depth, Depth: 3, Visitor: visitFunc(func(int, []byte, []byte) {}), Suffix: `"compaction"`}
		got, err := w.Compact(nil, []byte(src))
		if err == nil && w.SawSuffix != bytes.Contains(got, []byte(`"compaction"`)) {
			t.Fatalf("suffix of %q: %v", src, w.SawSuffix)
		}
	})
}
