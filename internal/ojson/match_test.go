package ojson

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MatchEncoding agrees with AppendJSON: it matches exactly the encoder's text and then hands out
// each member's text; any other text of the same value does not match.
func TestMatchEncoding(t *testing.T) {
	long := strings.Repeat("é\"\n", matchWindow) // windows end inside runes and between escapes
	for _, src := range []string{
		`{}`,
		`{"a":1,"b":[true,false,null,{"c":"d"}],"e":{"f":-1.5e3},"g":""}`,
		`{"s":"` + string(AppendStringBody(nil, long)) + `","n":[]}`,
		`{"a":"\u001f\t\\"}`,
	} {
		v, err := Parse([]byte(src))
		require.NoError(t, err)
		enc := v.AppendJSON(nil)
		texts, ok := v.MatchEncoding(enc)
		require.True(t, ok, src[:min(len(src), 40)])
		require.Len(t, texts, len(v.Members()))
		for i, m := range v.Members() {
			assert.Equal(t, string(m.Value.AppendJSON(nil)), string(texts[i]))
			assert.Equal(t, len(texts[i]), cap(texts[i]), "a member's text cannot be appended into the next")
		}
	}
	for _, src := range []string{
		`{"a": 1}`,       // a space
		`{"a":"\u00e9"}`, // an escape orjson does not write
		`{"a":1,"a":2}`,  // duplicate keys: the collapsed value encodes otherwise
		`{"a":[1,2]}`,
	} {
		v, err := Parse([]byte(src))
		require.NoError(t, err)
		_, ok := v.CollapseDuplicates().MatchEncoding([]byte(src))
		assert.Equal(t, string(v.CollapseDuplicates().AppendJSON(nil)) == src, ok, src)
	}
	v, err := Parse([]byte(`{"a":1}`))
	require.NoError(t, err)
	for _, raw := range []string{`{"a":1}x`, `{"a":1`, `{"a":2}`, ``} {
		_, ok := v.MatchEncoding([]byte(raw))
		assert.False(t, ok, raw)
	}
	_, ok := mustParse(t, `[1]`).MatchEncoding([]byte(`[1]`))
	assert.False(t, ok, "not an object")
}

// ParseShared reads what Parse reads; its strings share the data.
func TestParseShared(t *testing.T) {
	data := []byte(`{"plain":"text","esc":"a\nb","n":12}`)
	v, err := ParseShared(data)
	require.NoError(t, err)
	w, err := Parse(data)
	require.NoError(t, err)
	assert.Equal(t, string(w.AppendJSON(nil)), string(v.AppendJSON(nil)))
	s, _ := v.Members()[0].Value.AsString()
	data[10] = 'T' // only to prove the sharing: callers never modify data
	assert.Equal(t, "Text", s)
	_, err = ParseShared([]byte(`{"a":`))
	require.Error(t, err)
	_, err = ParseShared(nil)
	require.Error(t, err)
}

func mustParse(t *testing.T, s string) Value {
	t.Helper()
	v, err := Parse([]byte(s))
	require.NoError(t, err)
	return v
}
