package bench

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFirstDifference(t *testing.T) {
	want := []byte("abcdef")
	for _, c := range []struct {
		name string
		got  string
		at   int
		diff int
	}{
		{"equal prefix", "abc", 0, -1},
		{"equal middle", "cde", 2, -1},
		{"equal to the end", "def", 3, -1},
		{"first byte", "xbc", 0, 0},
		{"later byte", "cdx", 2, 4},
		{"past the end", "efg", 4, 6},
		{"all past the end", "g", 6, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.diff, firstDifference([]byte(c.got), want, c.at))
		})
	}
}

// TestCallChecksBytes: a call succeeds only with the workload's body byte for byte, however the
// reads split it; an answer of the right length with one byte changed fails, naming the byte.
func TestCallChecksBytes(t *testing.T) {
	wl := sse200Workload()
	body := wl.Body()
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
		want string // "" for success
	}{
		{"same bytes", func(b []byte) []byte { return b }, ""},
		{"one byte changed", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }, "first difference at byte " + strconv.Itoa(len(body)/2)},
		{"shorter", func(b []byte) []byte { return b[:len(b)-1] }, "first difference at byte " + strconv.Itoa(len(body)-1)},
		{"longer", func(b []byte) []byte { return append(b, '\n') }, "first difference at byte " + strconv.Itoa(len(body))},
	} {
		t.Run(c.name, func(t *testing.T) {
			answer := c.edit(append([]byte(nil), body...))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for i := 0; i < len(answer); i += 1000 {
					_, _ = w.Write(answer[i:min(i+1000, len(answer))])
					w.(http.Flusher).Flush()
				}
			}))
			defer srv.Close()
			g := newLoadGen(srv.URL, wl, 1)
			defer g.close()
			r := g.call(t.Context(), srv.URL+"/v1/chat/completions", make([]byte, 700))
			require.True(t, r.answered)
			if c.want == "" {
				assert.NoError(t, r.err)
				return
			}
			require.Error(t, r.err)
			assert.True(t, errors.Is(r.err, errBodyDiffers))
			assert.Contains(t, r.err.Error(), c.want)
		})
	}
}
