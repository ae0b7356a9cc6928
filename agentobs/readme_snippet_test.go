package agentobs_test

import (
	"context"
	"errors"
	"net/http"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/proxy"
)

// recordRollout records rollout 3-1's agent observations into store's capture directory.
func recordRollout(ctx context.Context, store *capture.Store) error {
	proc, err := agentobs.NewObservationProcessor(store) // writes <rollout_id>.observations.jsonl
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc),
		sdktrace.WithIDGenerator(proxy.RolloutIDGenerator(nil)))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	rec, err := agentobs.NewRecorder(tp, "3-1")
	if err != nil {
		return err
	}
	ctx, inv := rec.StartInvocation(ctx, "solver") // span "invoke_agent solver"
	// Transport links each model call by its X-Gymtrace-Model-Call-Id response header.
	httpClient := &http.Client{Transport: agentobs.Transport(http.DefaultTransport)}
	_ = httpClient // ... model calls through the proxy with httpClient and ctx ...

	// The model asked for tool call "call_1" (its id of the call): span "execute_tool bash".
	tctx, tc := agentobs.StartToolCall(ctx, "bash", "call_1")
	// Span "sandbox environment"; obs holds the measured wall/CPU time, peak memory, outcome.
	obs, runErr := agentobs.RunSandboxed(tctx, agentobs.SandboxCommand{Path: "sh", Args: []string{"-c", "echo 42"},
		Role: agentobs.SandboxRoleEnvironment, Timeout: time.Minute, MemoryLimitBytes: 1 << 30})
	_ = obs
	tc.End(runErr)

	cctx, c := agentobs.StartCompaction(ctx, "auto") // gen_ai.conversation.compacted=true
	_ = cctx                                         // ... the summarizing model call with cctx ...
	before, after := 90000, 4000                     // context sizes in tokens, e.g. from the usage
	c.End(agentobs.CompactionResult{TokensBefore: &before, TokensAfter: &after})
	inv.End(nil)
	return errors.Join(runErr, tp.ForceFlush(ctx))
}
