package proxy

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaskNonFinite: the mask keeps every offset and gives strict JSON where the literals were the
// only obstacle; the input is not modified.
func TestMaskNonFinite(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a":NaN,"b":"NaN"}`, `{"a":0e0,"b":"NaN"}`},
		{`[Infinity, -Infinity, -1e400]`, `[0e000000, 0e0000000, 0e0000]`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			in := []byte(c.in)
			got, found := maskNonFinite(in)
			require.True(t, found)
			assert.Equal(t, c.want, string(got))
			assert.Equal(t, c.in, string(in))
		})
	}
	_, found := maskNonFinite([]byte(`{"a":1}`))
	assert.False(t, found)
}

// TestReadAnswer: json.loads' reading, the non-finite floats kept as numbers Float64 reads.
func TestReadAnswer(t *testing.T) {
	cases := []struct {
		in      string
		path    []string
		float   float64 // the value at path, read by Float64
		text    string  // or its number text
		wantErr bool
	}{
		{in: `{"a":{"lp":-0.5}}`, path: []string{"a", "lp"}, float: -0.5},
		{in: `{"a":{"lp":NaN}}`, path: []string{"a", "lp"}, float: math.NaN()},
		{in: `{"a":[{"lp":-Infinity}]}`, path: []string{"a", "0", "lp"}, float: math.Inf(-1)},
		{in: `{"lp":1e400}`, path: []string{"lp"}, float: math.Inf(1)},
		{in: `{"id":1180591620717411303424,"lp":NaN}`, path: []string{"id"}, text: "1180591620717411303424"},
		{in: `{"id":1000,"x":NaN,"y":[10000,Infinity]}`, path: []string{"y", "0"}, text: "10000"},
		{in: `{"a":1,"a":NaN}`, path: []string{"a"}, float: math.NaN()},
		{in: `{"s":"NaN","x":NaN}`, path: []string{"s"}, text: ""},
		{in: `{"a":NaN`, wantErr: true},
		{in: `{"a":-NaN}`, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			v, err := readAnswer([]byte(c.in))
			if c.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			for _, p := range c.path {
				if els := v.Elems(); els != nil {
					v = els[int(p[0]-'0')]
					continue
				}
				var ok bool
				v, ok = v.Get(p)
				require.True(t, ok, p)
			}
			if s, ok := v.AsString(); ok {
				assert.Equal(t, "NaN", s, "a string stays a string")
				return
			}
			if c.text != "" {
				got, _ := v.NumberText()
				assert.Equal(t, c.text, got)
				return
			}
			f, ok := v.Float64()
			require.True(t, ok, "%s", v.String())
			if math.IsNaN(c.float) {
				assert.True(t, math.IsNaN(f))
			} else {
				assert.Equal(t, c.float, f)
			}
		})
	}
}
