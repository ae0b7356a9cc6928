package rollouts_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rollouts"
)

func ExampleAttach() {
	dir, _ := os.MkdirTemp("", "capture")
	defer os.RemoveAll(dir)
	store, _ := capture.NewStore(dir)

	in := strings.NewReader(`{"reward": 1.0, "_ng_task_index": 3, "_ng_rollout_index": 1}` + "\n" + `{"note":"no id"}` + "\n")
	var out strings.Builder
	sum, err := rollouts.Attach(context.Background(), in, &out, []*capture.Store{store}, rollouts.Options{})
	fmt.Print(out.String())
	fmt.Println(sum.Attached, sum.Unchanged, err)
	// Output:
	// {"reward":1.0,"_ng_task_index":3,"_ng_rollout_index":1,"ng_model_call_capture":{"rollout_id":"3-1","metrics":{"tokens_in":null,"tokens_out":null,"tokens_reasoning":null,"tokens_total":null,"cached_tokens":null,"latency_total_ms":null,"num_calls":0},"calls":[],"gaps":[{"code":"model_call_capture_no_records"}]}}
	// {"note":"no id"}
	// 1 1 <nil>
}

func ExampleClear() {
	dir, _ := os.MkdirTemp("", "capture")
	defer os.RemoveAll(dir)
	store, _ := capture.NewStore(dir)
	_ = store.MarkIncomplete("3-1-a1")

	rows := strings.NewReader(`{"_ng_task_index":3,"_ng_rollout_index":1,"_ng_attempt_index":1}` + "\n")
	sum, err := rollouts.Clear(rows, []*capture.Store{store})
	incomplete, _ := store.IsIncomplete("3-1-a1")
	fmt.Println(sum.IDs, sum.Cleared, sum.Files, err, incomplete)
	// Output:
	// [3-1-a1] [3-1-a1] 1 <nil> false
}
