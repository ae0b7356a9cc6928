package ojson_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

func TestAppendFloatMatchesOrjson(t *testing.T) {
	// Expected values computed with orjson 3.8.3 (orjson.dumps(float)); the Python repr differs
	// where noted (SPEC §0 D6).
	tests := []struct {
		f    float64
		want string
	}{
		{0.0, "0.0"},
		{math.Copysign(0, -1), "-0.0"}, // D6 example
		{1.0, "1.0"},
		{100.0, "100.0"},
		{1.5, "1.5"},
		{0.1, "0.1"},
		{0.0001, "0.0001"},
		{1e-05, "0.00001"},       // repr 1e-05
		{-0.000032, "-0.000032"}, // D6 example; repr -3.2e-05
		{1.2345e-5, "0.000012345"},
		{0.000012345678901234567, "0.000012345678901234568"},
		{-0.00009999, "-0.00009999"},
		{1e-6, "1e-6"}, // repr 1e-06
		{1e-7, "1e-7"}, // D6 example; repr 1e-07
		{1.5e-07, "1.5e-7"},
		{1e15, "1000000000000000.0"},
		{9999999999999998.0, "9999999999999998.0"},
		{1234567890123456.8, "1234567890123456.8"},
		{1e+16, "1e16"}, // repr 1e+16
		{12345678901234567.0, "1.2345678901234568e16"},
		{1e20, "1e20"}, // D6 example; repr 1e+20
		{1e+100, "1e100"},
		{1.5e300, "1.5e300"}, // D6 example; repr 1.5e+300
		{1.7976931348623157e+308, "1.7976931348623157e308"},
		{5e-324, "5e-324"},
		{2.5e-310, "2.5e-310"},
		{-1e-10, "-1e-10"},
		{-2.5, "-2.5"},
		{842.7, "842.7"},
		{1786032154.1234567, "1786032154.1234567"},
		{0.30000000000000004, "0.30000000000000004"},
		{123.456, "123.456"},
		{9007199254740992.0, "9007199254740992.0"},
		{-764415.5238432633, "-764415.5238432633"},
		{math.NaN(), "null"},
		{math.Inf(1), "null"},
		{math.Inf(-1), "null"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, string(ojson.AppendFloat(nil, tc.f)))
		})
	}
}

// TestAppendFloatOrjsonGolden compares AppendFloat with orjson's text for 2,200 floats
// (testdata/orjson_floats.json: random bit patterns and few-digit decimals at every power of ten
// from 1e-9 to 1e19, where the forms change).
func TestAppendFloatOrjsonGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "orjson_floats.json"))
	require.NoError(t, err)
	var golden struct {
		Cases [][2]string `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(b, &golden))
	require.Greater(t, len(golden.Cases), 2000)
	for _, c := range golden.Cases {
		bits, err := strconv.ParseUint(c[0], 16, 64)
		require.NoError(t, err)
		assert.Equal(t, c[1], string(ojson.AppendFloat(nil, math.Float64frombits(bits))), "bits %s", c[0])
	}
}

// TestAppendFloatTokenCaptureVector is case TE-24 of vectors/token_capture.json (SPEC §0 D6,
// TOKENS.md §2.2.3): each log prob of the input, and created_at, is written as the reference's
// orjson line has it. The file is Python's JSON (it holds a -Infinity), so it is read with
// ParsePython; its floats keep their values.
func TestAppendFloatTokenCaptureVector(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testvectors.Dir(t, "vectors"), "token_capture.json"))
	require.NoError(t, err)
	file, err := ojson.ParsePython(b)
	require.NoError(t, err)
	cases, _ := file.Get("cases")
	var tc ojson.Value
	for _, c := range cases.Elems() {
		if name, _ := c.Get("name"); name.Equal(ojson.String("TE-24")) {
			tc = c
		}
	}
	require.False(t, tc.IsNull(), "case TE-24")
	get := func(v ojson.Value, path ...string) ojson.Value {
		t.Helper()
		for _, k := range path {
			var ok bool
			v, ok = v.Get(k)
			require.True(t, ok, "%v", path)
		}
		return v
	}
	lineText, _ := get(tc, "expected", "canonical_line").AsString()
	line, err := ojson.Parse([]byte(lineText)) // strict: the number text is orjson's
	require.NoError(t, err)

	in, want := get(tc, "input", "fields", "generation_log_probs").Elems(), get(line, "generation_log_probs").Elems()
	require.Len(t, want, len(in))
	require.Len(t, in, 15)
	pairs := [][2]ojson.Value{{get(tc, "input", "fields", "created_at"), get(line, "created_at")}}
	for i := range in {
		pairs = append(pairs, [2]ojson.Value{in[i], want[i]})
	}
	for _, p := range pairs {
		f, ok := p[0].Float64()
		require.True(t, ok)
		w, _ := p[1].NumberText()
		assert.Equal(t, w, string(ojson.AppendFloat(nil, f)), "value %v", f)
	}
}

func TestAppendFloatRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := string(ojson.AppendFloat(nil, f))
		back, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		require.Equal(t, math.Float64bits(f), math.Float64bits(back), s)
		require.True(t, strings.ContainsAny(s, ".e"), s)
		require.True(t, ojson.ValidNumber(s), s)
	}
}
