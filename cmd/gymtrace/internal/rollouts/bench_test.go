package rollouts

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/gymtrace/gymtrace/capture"
)

// BenchmarkAttach attaches 100 rollouts of 4 calls each to rows carrying a 64 KiB response.
func BenchmarkAttach(b *testing.B) {
	s := newStore(b)
	var input bytes.Buffer
	payload := strings.Repeat("token ", 64<<10/6)
	for i := range 100 {
		id := "0-" + strconv.Itoa(i)
		writeCapture(b, s, id, strings.Repeat(callLine("c"+id, usage, "12.5"), 4))
		input.WriteString(`{"responses_create_params":{"input":"q"},"response":{"output_text":"` + payload +
			`"},"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":` + strconv.Itoa(i) + "}\n")
	}
	stores := []*capture.Store{s}
	b.ReportAllocs()
	b.SetBytes(int64(input.Len()))
	for b.Loop() {
		if _, err := Attach(context.Background(), bytes.NewReader(input.Bytes()), io.Discard, stores, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
