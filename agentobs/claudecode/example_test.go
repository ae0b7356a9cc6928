package claudecode_test

import (
	"fmt"
	"time"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/agentobs/claudecode"
)

// Extract reads a CLAUDE_CONFIG_DIR after the CLI exited. Run.Apply turns the CLI's stream-json
// output into the root invocation's outcome.
func ExampleExtract() {
	opts := claudecode.Options{RolloutID: "12-0", ModelServerName: "policy", Location: time.UTC}
	claudecode.Run{
		StreamJSON: []byte(`{"type":"result","subtype":"success","is_error":false,"duration_ms":5000}`),
		ExitCode:   new(int),
	}.Apply(&opts)

	bundle, err := claudecode.Extract("testdata/91_nested_tree/claude", opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range bundle.Records {
		switch v := r.(type) {
		case *agentobs.AgentInvocation:
			parent := "-"
			if v.ParentInvocationID != nil {
				parent = *v.ParentInvocationID
			}
			fmt.Printf("invocation %s parent=%s status=%s calls=%d\n", v.InvocationID, parent, v.Status, len(v.ModelCalls))
		case *agentobs.ToolCallObservation:
			fmt.Printf("tool %s %s %.0f ms\n", v.ToolCallID, v.Status, *v.DurationMS)
		}
	}
	fmt.Println("gaps:", len(bundle.Gaps))
	// Output:
	// invocation agent-child parent=session-root status=completed calls=1
	// invocation agent-grandchild parent=agent-child status=incomplete calls=1
	// invocation session-root parent=- status=completed calls=1
	// tool tool-grandchild timeout 1000 ms
	// tool tool-child completed 3000 ms
	// tool tool-fast completed 1000 ms
	// gaps: 0
}
