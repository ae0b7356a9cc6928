package capture

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadAvailable(t *testing.T) {
	tests := []struct {
		name        string
		content     string
		wantIndex   []int
		wantLines   []string
		wantInvalid int
		strictErr   string // "" = the strict reader succeeds
	}{
		{
			name:      "valid, damaged, valid (SPEC §8 #62)",
			content:   `{"id":"A"}` + "\n{not-json}\n" + `{"id":"B"}` + "\n",
			wantIndex: []int{0, 2}, wantLines: []string{`{"id":"A"}`, `{"id":"B"}`}, wantInvalid: 1,
			strictErr: "line 2",
		},
		{
			name:      "blank lines consume no index",
			content:   "\n  \n" + `{"a":1}` + "\n\t\n" + `{"a":2}` + "\n\n",
			wantIndex: []int{0, 1}, wantLines: []string{`{"a":1}`, `{"a":2}`},
		},
		{
			name:      "ASCII whitespace stripped, CRLF line ends",
			content:   "  \v\f" + `{"a":1}` + " \r\n" + `{"a":2}` + "\r\n",
			wantIndex: []int{0, 1}, wantLines: []string{`{"a":1}`, `{"a":2}`},
		},
		{
			name:        "lone CR does not split a line",
			content:     `{"a":1}` + "\r" + `{"b":2}` + "\n",
			wantInvalid: 1,
			strictErr:   "line 1",
		},
		{
			name:      "U+2028 and U+0085 inside a string do not split",
			content:   `{"t":"a` + "\u2028" + `b` + "\u0085" + `c"}` + "\n",
			wantIndex: []int{0}, wantLines: []string{`{"t":"a` + "\u2028" + `b` + "\u0085" + `c"}`},
		},
		{
			name:        "non-objects are invalid but strict-readable",
			content:     "[1]\n\"s\"\n3\nnull\n" + `{"a":1}` + "\n",
			wantIndex:   []int{4},
			wantLines:   []string{`{"a":1}`},
			wantInvalid: 4,
		},
		{
			name:        "NaN and Infinity rejected",
			content:     "NaN\n" + `{"a":NaN}` + "\n" + `{"a":Infinity}` + "\n",
			wantInvalid: 3,
			strictErr:   "line 1",
		},
		{
			name:        "invalid UTF-8 rejected",
			content:     `{"a":"` + "\xff" + `"}` + "\n",
			wantInvalid: 1,
			strictErr:   "line 1",
		},
		{
			name:        "integer beyond 64 bits rejected",
			content:     `{"a":18446744073709551616}` + "\n" + `{"a":18446744073709551615}` + "\n",
			wantIndex:   []int{1},
			wantLines:   []string{`{"a":18446744073709551615}`},
			wantInvalid: 1,
			strictErr:   "line 1",
		},
		{
			name:        "torn tail without newline",
			content:     `{"a":1}` + "\n" + `{"model_call_id":"x","dia`,
			wantIndex:   []int{0},
			wantLines:   []string{`{"a":1}`},
			wantInvalid: 1,
			strictErr:   "line 2",
		},
		{
			name:        "trailing garbage after object",
			content:     `{"a":1} x` + "\n",
			wantInvalid: 1,
			strictErr:   "line 1",
		},
		{name: "empty file", content: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			path, err := s.CapturePath("r")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))

			lines, invalid, err := s.ReadAvailable("r")
			require.NoError(t, err)
			assert.Equal(t, tt.wantInvalid, invalid)
			var gotIndex []int
			var gotLines []string
			for _, l := range lines {
				gotIndex = append(gotIndex, l.Index)
				gotLines = append(gotLines, string(l.Line))
			}
			assert.Equal(t, tt.wantIndex, gotIndex)
			assert.Equal(t, tt.wantLines, gotLines)

			rows, err := s.Read("r")
			if tt.strictErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "capture read r: "+tt.strictErr)
				return
			}
			require.NoError(t, err)
			assert.Len(t, rows, len(tt.wantLines)+tt.wantInvalid)
		})
	}
}

// SPEC §8 #5: a malformed line makes the strict reader fail.
func TestReadStrictMalformed(t *testing.T) {
	s := newTestStore(t)
	path, _ := s.CapturePath("r")
	require.NoError(t, os.WriteFile(path, []byte("{\"request\": {}}\n{not-json}\n"), 0o600))
	rows, err := s.Read("r")
	require.Error(t, err)
	assert.Nil(t, rows)
	assert.Contains(t, err.Error(), "line 2")
}

func TestReadMissingFile(t *testing.T) {
	s := newTestStore(t)
	rows, err := s.Read("nothing")
	require.NoError(t, err)
	assert.Empty(t, rows)
	lines, invalid, err := s.ReadAvailable("nothing")
	require.NoError(t, err)
	assert.Empty(t, lines)
	assert.Zero(t, invalid)
}

func TestReadIOError(t *testing.T) {
	s := newTestStore(t)
	path, _ := s.CapturePath("r")
	require.NoError(t, os.Mkdir(path, 0o700)) // reading a directory fails with EISDIR
	_, err := s.Read("r")
	require.ErrorContains(t, err, "capture read r:")
	_, _, err = s.ReadAvailable("r")
	require.ErrorContains(t, err, "capture read r:")
}

// FuzzParseAvailable checks the tolerant reader on arbitrary content: it never panics, every non-blank
// line is either kept (a strict JSON object, with its index) or counted invalid, indices increase, and
// the strict reader agrees.
func FuzzParseAvailable(f *testing.F) {
	for _, seed := range []string{
		"",
		"\n",
		`{"a":1}` + "\n{not-json}\n" + `{"b":2}` + "\n",
		"[1]\n\n  \r\n" + `{"x":"\u2028"}`,
		`{"a":1}` + "\r" + `{"b":2}`,
		"NaN\n\"s\"\n{\"a\":\"\xff\"}\n",
		`{"model_call_id":"x","dia`,
		"\v\f{}\t\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, invalid := parseAvailable(data)
		var nonblank [][]byte
		for _, raw := range bytes.Split(data, []byte{'\n'}) {
			if l := bytes.Trim(raw, " \t\n\r\v\f"); len(l) > 0 {
				nonblank = append(nonblank, l)
			}
		}
		require.Equal(t, len(nonblank), len(lines)+invalid, "every non-blank line is kept or invalid")
		prev := -1
		objects := 0
		for _, l := range lines {
			require.Greater(t, l.Index, prev, "indices increase")
			require.Less(t, l.Index, len(nonblank))
			require.Equal(t, nonblank[l.Index], []byte(l.Line), "line matches its index")
			require.Equal(t, byte('{'), l.Line[0])
			require.True(t, utf8.Valid(l.Line))
			require.True(t, json.Valid(l.Line))
			prev = l.Index
			objects++
		}
		rows, err := parseStrict(data)
		if err == nil {
			require.Len(t, rows, len(nonblank), "strict reader returns every non-blank line")
			for _, r := range rows {
				if r[0] != '{' {
					objects++
				}
			}
			require.Equal(t, len(nonblank), objects, "strict success means only non-objects are invalid")
		} else {
			require.Nil(t, rows)
			require.Greater(t, invalid, 0, "a strict failure is an invalid line")
		}
	})
}
