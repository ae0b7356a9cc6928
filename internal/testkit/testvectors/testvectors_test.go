package testvectors

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/ojson"
)

// fatalTB records the first Fatalf and ends the calling goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatalOf runs fn with a fatalTB in its own goroutine and returns the Fatalf message ("" if none).
func fatalOf(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	<-done
	return tb.msg
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"whitespace removed, order kept", `{ "b" : 1 , "a" : [ 2 , 3 ] }`, `{"b":1,"a":[2,3]}`},
		{"number text kept", `[1.50, 1e2, -0, 12345678901234567890]`, `[1.50,1e2,-0,12345678901234567890]`},
		{"duplicate keys kept", `{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{"escapes in orjson form", `"\u00e9\/\u2028"`, "\"é/\u2028\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Canonical(t, []byte(tt.in)))
		})
	}
	t.Run("invalid JSON fails the test", func(t *testing.T) {
		msg := fatalOf(t, func(tb testing.TB) { Canonical(tb, []byte(`[NaN]`)) })
		assert.Contains(t, msg, "testvectors: parse [NaN]")
	})
}

// dirStore is a CaptureStore over a directory, recording MarkIncomplete calls.
type dirStore struct {
	dir    string
	marked []string
}

func (s *dirStore) CapturePath(id string) (string, error) {
	return filepath.Join(s.dir, id+".capture.jsonl"), nil
}

func (s *dirStore) MarkIncomplete(id string) error {
	s.marked = append(s.marked, id)
	return nil
}

func TestWriteStore(t *testing.T) {
	tests := []struct {
		name       string
		spec       string
		wantFile   bool
		wantText   string
		wantMarker bool
	}{
		{"file and marker", `{"file_exists":true,"lines":["{\"a\":1}\n","{\"b\"",":2}\n"],"marker":true}`, true, "{\"a\":1}\n{\"b\":2}\n", true},
		{"empty file", `{"file_exists":true,"lines":[],"marker":false}`, true, "", false},
		{"no file, marker only", `{"file_exists":false,"lines":null,"marker":true}`, false, "", true},
		{"missing flags are false", `{}`, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &dirStore{dir: t.TempDir()}
			WriteStore(t, s, "r-1", Value(t, []byte(tt.spec)))
			b, err := os.ReadFile(filepath.Join(s.dir, "r-1.capture.jsonl"))
			if tt.wantFile {
				require.NoError(t, err)
				assert.Equal(t, tt.wantText, string(b))
			} else {
				assert.ErrorIs(t, err, os.ErrNotExist)
			}
			if tt.wantMarker {
				assert.Equal(t, []string{"r-1"}, s.marked)
			} else {
				assert.Empty(t, s.marked)
			}
		})
	}
	bad := []struct {
		name, spec, want string
	}{
		{"flag not a boolean", `{"file_exists":1}`, "store file_exists is 1, not a boolean"},
		{"line not a string", `{"file_exists":true,"lines":[1]}`, "store line 1 is not a string"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			s := &dirStore{dir: t.TempDir()}
			spec := Value(t, []byte(tt.spec))
			msg := fatalOf(t, func(tb testing.TB) { WriteStore(tb, s, "r-1", spec) })
			assert.Contains(t, msg, tt.want)
		})
	}
}

var _ CaptureStore = (*dirStore)(nil)

// Value parses with ojson.Parse (SPEC §0 D6): key order and duplicate keys survive.
func TestValueIsStrictOrdered(t *testing.T) {
	v := Value(t, []byte(`{"z":1,"a":2,"z":3}`))
	require.Equal(t, ojson.KindObject, v.Kind())
	var keys []string
	for _, m := range v.Members() {
		keys = append(keys, m.Key)
	}
	assert.Equal(t, []string{"z", "a", "z"}, keys)
}

func TestDecode(t *testing.T) {
	got := Decode(t, []byte(`{"i":12345678901234567890,"f":1.50,"s":"x","n":null}`))
	assert.Equal(t, map[string]any{
		"i": json.Number("12345678901234567890"),
		"f": json.Number("1.50"),
		"s": "x",
		"n": nil,
	}, got)
	msg := fatalOf(t, func(tb testing.TB) { Decode(tb, []byte(`{"a":`)) })
	assert.Contains(t, msg, `testvectors: decode {"a":`)
}

func TestParseUpstreamBehavior(t *testing.T) {
	tests := []struct {
		name, in  string
		wantDelay time.Duration
		wantErr   string
	}{
		{"delay_s absent: the README's 0.3 s", `{"abort_after_bytes":670,"how":"reset"}`, 300 * time.Millisecond, ""},
		{"delay_s given", `{"abort_after_bytes":1,"how":"close","delay_s":1.5}`, 1500 * time.Millisecond, ""},
		{"delay_s zero", `{"abort_after_bytes":1,"how":"reset","delay_s":0}`, 0, ""},
		{"negative delay", `{"abort_after_bytes":1,"delay_s":-0.1}`, 0, "delay_s is negative"},
		{"negative bytes", `{"abort_after_bytes":-1}`, 0, "abort_after_bytes is negative"},
		{"unknown key", `{"abort_after_bytes":1,"delay":0.3}`, 0, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ub, err := parseUpstreamBehavior([]byte(tt.in))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantDelay, ub.Delay())
		})
	}
}

func TestReadUpstreamBehavior(t *testing.T) {
	dirs := ConformanceCases(t)
	found := 0
	for _, dir := range dirs {
		if ReadUpstreamBehavior(t, dir) != nil {
			found++
		}
	}
	assert.Positive(t, found, "at least one case breaks its upstream")
	assert.Nil(t, ReadUpstreamBehavior(t, t.TempDir()), "no file: nil")
}

// TestQuoteNonFinite: Python's bare NaN/Infinity become strings; the same text inside a string,
// escaped quotes included, is left alone.
func TestQuoteNonFinite(t *testing.T) {
	in := `{"a":[-Infinity,Infinity,NaN,1],"s":"NaN \"Infinity\" -Infinity","b":NaN}`
	want := `{"a":["-Infinity","Infinity","NaN",1],"s":"NaN \"Infinity\" -Infinity","b":"NaN"}`
	got := quoteNonFinite([]byte(in))
	assert.Equal(t, want, string(got))
	assert.True(t, json.Valid(got))
	assert.Equal(t, `{"a":1}`, string(quoteNonFinite([]byte(`{"a":1}`))))
}
