package demo

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gymtrace/gymtrace/agentobs"
)

// Sandbox of the calculator tool: a POSIX shell on this machine, measured by agentobs.RunSandboxed.
const (
	// SandboxID is the sandbox_id of the demo's tool calls and sandbox runs.
	SandboxID = "local-shell"
	// sandboxTimeout kills a calculator run that takes longer (outcome "timeout").
	sandboxTimeout = 10 * time.Second
	// calculatorScript is the sandboxed command: shell arithmetic on the operands and operator,
	// passed as positional parameters (never spliced into the script).
	calculatorScript = `echo "$(( $1 $2 $3 ))"`
)

// runTool runs one tool call of the model as an execute_tool observation of the invocation ctx
// carries (timed by the recorder) and returns its result text; a failure is reported to the model
// as the result, as agents do, and ends the tool call failed.
func runTool(ctx context.Context, tc ToolCall) string {
	tctx, tool := agentobs.StartToolCall(ctx, tc.Name, tc.ID, agentobs.WithSandboxID(SandboxID))
	out, err := execTool(tctx, tc)
	tool.End(err)
	if err != nil {
		return "error: " + err.Error()
	}
	return out
}

// execTool runs tc: the calculator in the sandbox; any other tool is an error.
func execTool(ctx context.Context, tc ToolCall) (string, error) {
	if tc.Name != toolName {
		return "", fmt.Errorf("unknown tool %q (only %q exists)", tc.Name, toolName)
	}
	return sandboxedCalculator(ctx, tc.Arguments)
}

// sandboxedCalculator evaluates the calculator's arguments in a sandboxed shell (sh -c with the
// operands and the operator as positional parameters), a "sandbox agent" observation with the
// measured wall time, CPU time and peak memory when ctx carries an invocation. Its output must be
// the value the operation has (calculator): a shell that computes anything else is an error.
func sandboxedCalculator(ctx context.Context, arguments string) (string, error) {
	o, err := parseOperation(arguments)
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	obs, err := agentobs.RunSandboxed(ctx, agentobs.SandboxCommand{
		Path: "sh",
		Args: []string{"-c", calculatorScript, toolName,
			strconv.FormatInt(o.a, 10), o.op, strconv.FormatInt(o.b, 10)},
		Stdout:    &stdout,
		Stderr:    &stderr,
		Timeout:   sandboxTimeout,
		Role:      agentobs.SandboxRoleAgent,
		SandboxID: SandboxID,
	})
	if err != nil {
		return "", fmt.Errorf("calculator: sandbox: %w", err)
	}
	if obs.Outcome != agentobs.SandboxOutcomeCompleted {
		return "", fmt.Errorf("calculator: sandbox outcome %s: %s", obs.Outcome, strings.TrimSpace(stderr.String()))
	}
	got := strings.TrimSpace(stdout.String())
	if want := strconv.FormatInt(o.value(), 10); got != want {
		return "", fmt.Errorf("calculator: the sandbox computed %q for %d %s %d, want %s", got, o.a, o.op, o.b, want)
	}
	return got, nil
}
