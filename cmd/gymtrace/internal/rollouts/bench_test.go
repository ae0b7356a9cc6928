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

// BenchmarkAttach attaches 100 rollouts of 4 calls each to rows carrying a 64 KiB response, with
// and without the ng_trajectory projection.
func BenchmarkAttach(b *testing.B) {
	s := newStore(b)
	var input bytes.Buffer
	payload := strings.Repeat("token ", 64<<10/6)
	for i := range 100 {
		id := "0-" + strconv.Itoa(i)
		var calls strings.Builder
		for c := range 4 {
			calls.WriteString(callLine("c"+id+"-"+strconv.Itoa(c), usage, "12.5"))
		}
		writeCapture(b, s, id, calls.String())
		input.WriteString(`{"responses_create_params":{"input":"q"},"response":{"output_text":"` + payload +
			`"},"reward":1.0,"_ng_task_index":0,"_ng_rollout_index":` + strconv.Itoa(i) + "}\n")
	}
	stores := []*capture.Store{s}
	for _, bc := range []struct {
		name string
		opts Options
	}{{"attachment", Options{}}, {"projection", Options{Trajectory: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(input.Len()))
			for b.Loop() {
				sum, err := Attach(context.Background(), bytes.NewReader(input.Bytes()), io.Discard, stores, bc.opts)
				if err != nil || len(sum.TrajectoryErrors) > 0 {
					b.Fatal(err, sum.TrajectoryErrors)
				}
			}
		})
	}
}
