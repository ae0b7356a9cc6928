package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// TestAttachAndReportFlagUnattributedObservations: observation spans that named no rollout (SPEC
// §0 D18), written by the SDK's processor to _unattributed.observations.jsonl, are a health
// finding of report and of attach (stderr; --strict exits 1 naming the file), and no command takes
// the file for a rollout's.
func TestAttachAndReportFlagUnattributedObservations(t *testing.T) {
	dir := t.TempDir()
	rec := `{"model_call_id":"c1","dialect":"chat","model_ref":{"type":"responses_api_models","name":"p"},` +
		`"started_at":1.0,"completed_at":2.0,"latency_ms":1000.0,"status_code":200,"error_category":null,` +
		`"request":{"model":"m"},"response":{"id":"r","model":"m","usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0-0"+capture.CaptureFileSuffix), []byte(rec), 0o600))
	input := filepath.Join(t.TempDir(), "rollouts.jsonl")
	require.NoError(t, os.WriteFile(input, []byte(`{"_ng_task_index":0,"_ng_rollout_index":0}`+"\n"), 0o600))
	output := filepath.Join(t.TempDir(), "out.jsonl")
	attach := func(extra ...string) cliResult {
		return runGymtrace(t, append([]string{"attach", "--capture-dir", dir, "--input", input, "--output", output, "--no-trajectory"}, extra...)...)
	}

	r := attach("--strict")
	require.NoError(t, r.err, "a clean directory passes --strict")
	assert.NotContains(t, r.stderr, capture.UnattributedObservationsFile)

	// Two tool spans of one trace and one of another, none naming a rollout; Shutdown writes them.
	store, err := capture.NewStore(dir)
	require.NoError(t, err)
	proc, err := agentobs.NewObservationProcessor(store, agentobs.WithProcessorLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc)).Tracer("test")
	tool := attribute.String("gen_ai.operation.name", "execute_tool")
	ctx, root := tracer.Start(context.Background(), "execute_tool a")
	root.SetAttributes(tool)
	_, child := tracer.Start(ctx, "execute_tool b")
	child.SetAttributes(tool)
	child.End()
	root.End()
	_, other := tracer.Start(context.Background(), "execute_tool c")
	other.SetAttributes(tool)
	other.End()
	require.NoError(t, proc.Shutdown(context.Background()))
	path := filepath.Join(dir, capture.UnattributedObservationsFile)
	require.FileExists(t, path)
	want := path + " holds 3 observation spans of 2 traces that name no rollout (reasons: 3 flushed)"

	r = attach()
	require.NoError(t, r.err, "without --strict: reported, exit 0")
	assert.Contains(t, r.stderr, want)
	r = attach("--strict")
	require.Error(t, r.err)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.err.Error(), "attach --strict: observation spans that name no rollout: "+want)
	assert.Contains(t, r.err.Error(), output+" was written")

	r = runGymtrace(t, "report", "--capture-dir", dir)
	require.NoError(t, r.err)
	text := strings.ReplaceAll(r.stdout, "\n    ", " ") // the text report wraps its findings
	assert.Contains(t, text, "health: 1 finding")
	assert.Contains(t, text, "holds 3 observation spans of 2 traces that name no rollout (reasons: 3 flushed)")
	assert.Contains(t, text, "(SPEC §0 D18)")
	assert.NotContains(t, r.stdout, "rollout _unattributed", "not a rollout of the report")

	r = runGymtrace(t, "calls", "--capture-dir", dir, "_unattributed")
	assert.Equal(t, 2, r.code, "no rollout can be named _unattributed (SPEC D12)")
}

// TestReportAndAttachUnreadableObservationFiles: an _unattributed.observations.jsonl and a
// rollout's <id>.observations.jsonl that are a symbolic link (to /etc/passwd), a FIFO or a
// directory — which the capture store never opens — are findings of report (exit 0, the table
// printed), as a symlinked capture file is, and attach reports them on stderr and goes on.
func TestReportAndAttachUnreadableObservationFiles(t *testing.T) {
	rec := `{"model_call_id":"c1","dialect":"chat","model_ref":{"type":"responses_api_models","name":"p"},` +
		`"started_at":1.0,"completed_at":2.0,"latency_ms":1000.0,"status_code":200,"error_category":null,` +
		`"request":{"model":"m"},"response":{"id":"r","model":"m","usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}}` + "\n"
	for _, tt := range []struct {
		kind string
		make func(t *testing.T, path string)
	}{
		{"a symbolic link", func(t *testing.T, path string) { require.NoError(t, os.Symlink("/etc/passwd", path)) }},
		{"a FIFO", func(t *testing.T, path string) { require.NoError(t, syscall.Mkfifo(path, 0o600)) }},
		{"a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o700)) }},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "0-0"+capture.CaptureFileSuffix), []byte(rec), 0o600))
			unattributed := filepath.Join(dir, capture.UnattributedObservationsFile)
			observations := filepath.Join(dir, "0-0"+capture.ObservationsFileSuffix)
			tt.make(t, unattributed)
			tt.make(t, observations)
			rule := "not a regular file (" + tt.kind + ")"

			r := runGymtrace(t, "report", "--capture-dir", dir)
			require.NoError(t, r.err, "stderr: %s", r.stderr)
			// The text report wraps its findings, long paths too: compare without white space.
			squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
			text := squash(r.stdout)
			assert.Contains(t, r.stdout, "health: 2 findings\n")
			assert.Contains(t, text, squash(unattributed+" cannot be read: "))
			assert.Contains(t, text, squash("rollout 0-0: its observations file cannot be read"))
			assert.Contains(t, text, squash(observations+": "+rule))
			assert.Regexp(t, `(?m)^0-0 +1 +3 +4 .*obs unreadable$`, r.stdout, "the table is printed")
			assert.NotContains(t, r.stdout, "root:", "the link's target is never read")

			input := filepath.Join(t.TempDir(), "rollouts.jsonl")
			require.NoError(t, os.WriteFile(input, []byte(`{"_ng_task_index":0,"_ng_rollout_index":0}`+"\n"), 0o600))
			output := filepath.Join(t.TempDir(), "out.jsonl")
			r = runGymtrace(t, "attach", "--capture-dir", dir, "--input", input, "--output", output, "--no-trajectory")
			require.NoError(t, r.err, "attach warns and goes on")
			assert.Contains(t, r.stderr, unattributed+" cannot be read: ")
			assert.Contains(t, r.stderr, "observations could not be read, ng_agent_observations not joined: line 1")
			assert.NotContains(t, r.stderr, "invalid ng_agent_observations")
			assert.Contains(t, r.stderr, "1 with unreadable observations")
			assert.Contains(t, r.stderr, rule)
			assert.FileExists(t, output)
		})
	}
}
