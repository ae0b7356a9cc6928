package rollouts

import (
	"bytes"
	"context"
	"testing"

	"github.com/gymtrace/gymtrace/capture"
)

// FuzzAttach feeds random input to Attach: it must never panic, must write exactly one line per
// input line, and every line it does not attach must come out with its bytes unchanged.
func FuzzAttach(f *testing.F) {
	for _, seed := range []string{
		"",
		"{}\n",
		"{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\n",
		"{\"_ng_task_index\":0,\"_ng_rollout_index\":1,\"ng_model_call_capture\":null}\r\n[]\n\n",
		"{\"_ng_rollout_id\":\"x y\"}\nnot json\n{\"_ng_task_index\":\"a/b\",\"_ng_rollout_index\":0}",
		"{\"_ng_task_index\":1.5,\"_ng_rollout_index\":true,\"_ng_attempt_index\":\"2\"}\n",
		"{\"_ng_task_index\":0,\"_ng_rollout_index\":0,\"ng_trajectory\":{\"gaps\":[{\"code\":\"multimodal_history_redacted\"}]}}",
		"{\"a\":\"\xff\",\"_ng_rollout_id\":\"\\u00e9\"}\n\r\n",
	} {
		f.Add([]byte(seed), false)
	}
	s, err := capture.NewStore(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Append(context.Background(), "0-0", []byte(callLine("c", usage, "1.0"))); err != nil {
		f.Fatal(err)
	}
	stores := []*capture.Store{s}
	f.Fuzz(func(t *testing.T, input []byte, payloads bool) {
		var out bytes.Buffer
		sum, err := Attach(context.Background(), bytes.NewReader(input), &out, stores, Options{IncludePayloads: payloads})
		if err != nil && sum.Malformed == 0 {
			t.Fatalf("unexpected error: %v", err)
		}
		in := splitLines(input)
		got := splitLines(out.Bytes())
		if len(in) != len(got) || sum.Rows != len(in) {
			t.Fatalf("%d input lines, %d output lines, %d rows counted", len(in), len(got), sum.Rows)
		}
		if sum.Attached+sum.Unchanged+sum.Malformed != sum.Rows {
			t.Fatalf("counts do not add up: %+v", sum)
		}
		if out.Len() > 0 && out.Bytes()[out.Len()-1] != '\n' {
			t.Fatal("output does not end in a newline")
		}
		for i := range in {
			if !bytes.Equal(in[i], got[i]) && !bytes.Contains(got[i], []byte(`"ng_model_call_capture":{"rollout_id":`)) {
				t.Fatalf("line %d changed without an attachment: %q -> %q", i+1, in[i], got[i])
			}
		}
	})
}

// splitLines splits b after each "\n" and drops the terminators; a last line without one counts.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i])
		b = b[i+1:]
	}
	return out
}
