package rollouts

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// TestAttachJoinsObservations: SPEC §5.4 — a row's ng_agent_observations is validated and joined
// with its captured calls in place; an invalid bundle is kept as it was and reported; joining an
// attached output again changes nothing (SPEC D11).
func TestAttachJoinsObservations(t *testing.T) {
	s := newStore(t)
	writeCapture(t, s, "r1", callLine("c1", usage, "2.5")+callLine("c2", usage, "1.0"))
	stores := []*capture.Store{s}
	tests := []struct {
		name       string
		line       string
		want       string // ng_agent_observations after attach
		wantJoined int
		wantErr    string
	}{
		{
			name: "ref by model_call_id resolved, other call unowned",
			line: `{"_ng_rollout_id":"r1","ng_agent_observations":{"source":"gymtrace","records":[{"kind":"agent_invocation","invocation_id":"root","model_calls":[{"model_call_id":"c1"}]}],"gaps":[]}}`,
			want: `{"source":"gymtrace","records":[{"kind":"agent_invocation","invocation_id":"root","parent_invocation_id":null,"spawned_by_tool_call_id":null,"status":"unknown","duration_ms":null,"error_type":null,` +
				`"model_calls":[{"model_call_id":"c1","model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"resp-c1"}],"conversation":[]}],` +
				`"gaps":[{"code":"model_call_ownership_unavailable","invocation_id":null,"detail":"capture:c2:call_index=1"}]}`,
			wantJoined: 1,
		},
		{
			name: "ref by response id resolved",
			line: `{"_ng_rollout_id":"r1","ng_agent_observations":{"source":"gymtrace","records":[{"kind":"agent_invocation","invocation_id":"root","model_calls":[{"model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"resp-c2"}]}],"gaps":[]}}`,
			want: `{"source":"gymtrace","records":[{"kind":"agent_invocation","invocation_id":"root","parent_invocation_id":null,"spawned_by_tool_call_id":null,"status":"unknown","duration_ms":null,"error_type":null,` +
				`"model_calls":[{"model_call_id":"c2","model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"resp-c2"}],"conversation":[]}],` +
				`"gaps":[{"code":"model_call_ownership_unavailable","invocation_id":null,"detail":"capture:c1:call_index=0"}]}`,
			wantJoined: 1,
		},
		{
			name:    "unknown field: kept as it was, reported",
			line:    `{"_ng_rollout_id":"r1","ng_agent_observations":{"source":"gymtrace","records":[{"kind":"tool_call","invocation_id":"root","tool_call_id":"t1","output":"x"}],"gaps":[]}}`,
			want:    `{"source":"gymtrace","records":[{"kind":"tool_call","invocation_id":"root","tool_call_id":"t1","output":"x"}],"gaps":[]}`,
			wantErr: "output",
		},
		{
			name: "null left alone",
			line: `{"_ng_rollout_id":"r1","ng_agent_observations":null}`,
			want: `null`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, sum, err := attachString(t, tt.line+"\n", stores, Options{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, member(t, lines(out)[0], "ng_agent_observations"))
			assert.Equal(t, tt.wantJoined, sum.ObservationsJoined)
			if tt.wantErr != "" {
				require.Len(t, sum.ObservationErrors, 1)
				assert.Equal(t, 1, sum.ObservationErrors[0].Line)
				assert.ErrorContains(t, sum.ObservationErrors[0], tt.wantErr)
			} else {
				assert.Empty(t, sum.ObservationErrors)
			}
			again, _, err := attachString(t, out, stores, Options{})
			require.NoError(t, err)
			assert.Equal(t, out, again, "attach is idempotent")
		})
	}
}

// recordObservations records, through the agentobs recorder and its durable SpanProcessor, one
// invocation of rollout id that made the model call callID and ran one tool call.
func recordObservations(t *testing.T, s *capture.Store, id, callID string) {
	t.Helper()
	proc, err := agentobs.NewObservationProcessor(s)
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc))
	rec, err := agentobs.NewRecorder(tp, id)
	require.NoError(t, err)
	ctx, inv := rec.StartInvocation(t.Context(), "solver")
	require.NoError(t, agentobs.RecordModelCall(ctx, callID))
	_, tc := agentobs.StartToolCall(ctx, "bash", "call-1")
	tc.End(nil)
	inv.End(nil)
	require.NoError(t, tp.Shutdown(t.Context()))
}

// TestAttachObservationsFile: a row without ng_agent_observations takes the bundle of its
// rollout's observations file (issue 4 part 5), joined with the calls; clear removes the file.
func TestAttachObservationsFile(t *testing.T) {
	s := newStore(t)
	writeCapture(t, s, "r1", callLine("c1", usage, "2.5"))
	recordObservations(t, s, "r1", "c1")
	stores := []*capture.Store{s}

	out, sum, err := attachString(t, `{"_ng_rollout_id":"r1"}`+"\n"+`{"_ng_rollout_id":"r2"}`+"\n", stores, Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, sum.ObservationsJoined)
	rows := lines(out)
	bundle, err := agentobs.DecodeBundle([]byte(member(t, rows[0], "ng_agent_observations")))
	require.NoError(t, err)
	assert.Equal(t, agentobs.BundleSource, bundle.Source)
	assert.Empty(t, bundle.Gaps, "every call owned, every ref resolved")
	var inv *agentobs.AgentInvocation
	var tools int
	for _, r := range bundle.Records {
		switch r := r.(type) {
		case *agentobs.AgentInvocation:
			inv = r
		case *agentobs.ToolCallObservation:
			tools++
		}
	}
	require.NotNil(t, inv)
	require.Len(t, inv.ModelCalls, 1)
	assert.Equal(t, "c1", *inv.ModelCalls[0].ModelCallID)
	assert.Equal(t, "resp-c1", *inv.ModelCalls[0].ResponseID, "the ref is the canonical one of the captured call")
	assert.Equal(t, 1, tools)
	assert.NotContains(t, rows[1], "ng_agent_observations", "a rollout without observations gets none")

	sumClear, err := Clear(strings.NewReader(`{"_ng_rollout_id":"r1"}`+"\n"), stores)
	require.NoError(t, err)
	assert.Equal(t, 2, sumClear.Files, "the capture file and the observations file")
	_, found, err := agentobs.ReadBundle(s, "r1")
	require.NoError(t, err)
	assert.False(t, found)
}

// TestAttachClaudeCodeBundle: a claude_code bundle runs the compaction resolver before the generic
// join (SPEC §5.4, §6.6; §8 #98): the summarizing call is linked to the compaction.
func TestAttachClaudeCodeBundle(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "agentobs", "claudecode", "testdata", "98_compaction_call_linked")
	calls, err := os.ReadFile(filepath.Join(dir, "calls.capture.jsonl"))
	require.NoError(t, err)
	bundle, err := os.ReadFile(filepath.Join(dir, "bundle.json"))
	require.NoError(t, err)
	golden, err := os.ReadFile(filepath.Join(dir, "joined.golden.json"))
	require.NoError(t, err)
	s := newStore(t)
	writeCapture(t, s, "cc-1", string(calls))
	var row bytes.Buffer
	require.NoError(t, json.Compact(&row, []byte(`{"_ng_rollout_id":"cc-1","ng_agent_observations":`+string(bundle)+`}`)))
	out, sum, err := attachString(t, row.String()+"\n", []*capture.Store{s}, Options{})
	require.NoError(t, err)
	require.Empty(t, sum.ObservationErrors)
	var want bytes.Buffer
	require.NoError(t, json.Compact(&want, golden))
	assert.JSONEq(t, want.String(), member(t, lines(out)[0], "ng_agent_observations"))
	assert.Contains(t, member(t, lines(out)[0], "ng_agent_observations"), `"call-compact"`)
}

// TestAttachRefusedClaudeCodeDirectory performs issue #14 finding 4's attack on attach: among good
// rows, one row names a Claude Code directory whose transcript is a symbolic link to /dev/zero and
// one a directory with a FIFO. Every row is written; the hostile rows get the bundle with the gap
// claude_code_transcript_unreadable (SPEC §0 D16) and are listed in Summary.TranscriptErrors.
func TestAttachRefusedClaudeCodeDirectory(t *testing.T) {
	s := newStore(t)
	good := t.TempDir()
	writeClaudeTranscript(t, good, `{"sessionId":"sess","type":"assistant","message":{"id":"msg-1","role":"assistant","content":"hi"}}`)
	zero := t.TempDir()
	writeClaudeTranscript(t, zero, `{"sessionId":"z"}`)
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(zero, "projects", "w", "evil.jsonl")))
	fifo := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(fifo, "projects", "w"), 0o700))
	require.NoError(t, syscall.Mkfifo(filepath.Join(fifo, "projects", "w", "evil.jsonl"), 0o600))
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		writeCapture(t, s, id, callLine("c-"+id, usage, "1.0"))
	}
	row := func(id, dir string) string {
		b, err := json.Marshal(map[string]string{"_ng_rollout_id": id, "cc_dir": dir})
		require.NoError(t, err)
		return string(b) + "\n"
	}
	input := row("r1", good) + row("r2", zero) + row("r3", good) + row("r4", fifo)
	out, sum, err := attachString(t, input, []*capture.Store{s}, Options{ClaudeCodeDirKey: "cc_dir", ClaudeCodeModelServerName: "policy"})
	require.NoError(t, err)
	rows := lines(out)
	require.Len(t, rows, 4)
	assert.Equal(t, 4, sum.Attached)
	assert.Equal(t, 4, sum.ObservationsJoined)
	for _, i := range []int{0, 2} {
		b, err := agentobs.DecodeBundle([]byte(member(t, rows[i], "ng_agent_observations")))
		require.NoError(t, err)
		assert.NotEmpty(t, b.Records, "good row %d keeps its observations", i+1)
	}
	wantGap := func(rule string) string {
		return `{"code":"claude_code_transcript_unreadable","invocation_id":null,"detail":"projects/w/evil.jsonl ` + rule + `"}`
	}
	link := "is a symbolic link: transcripts and the directories below the config directory are opened without following links"
	assert.Contains(t, member(t, rows[1], "ng_agent_observations"), `"records":[],"gaps":[`+wantGap(link))
	assert.Contains(t, member(t, rows[3], "ng_agent_observations"), `"records":[],"gaps":[`+wantGap("is a FIFO, not a regular file: transcripts are read only from regular files"))
	require.Len(t, sum.TranscriptErrors, 2)
	assert.Equal(t, 2, sum.TranscriptErrors[0].Line)
	assert.Equal(t, "line 2: claude code transcript "+filepath.Join(zero, "projects", "w", "evil.jsonl")+" "+link, sum.TranscriptErrors[0].Error())
	assert.Equal(t, 4, sum.TranscriptErrors[1].Line)
}

// writeClaudeTranscript writes one transcript line under configDir/projects/w/s.jsonl.
func writeClaudeTranscript(t *testing.T, configDir, line string) {
	t.Helper()
	p := filepath.Join(configDir, "projects", "w", "s.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte(line+"\n"), 0o600))
}

// Observations that cannot be read are a read error naming the cause, not an invalid bundle: the row
// gets its attachment and no ng_agent_observations.
func TestAttachUnreadableObservationsFile(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{name: "a directory", make: func(t *testing.T, p string) { require.NoError(t, os.Mkdir(p, 0o700)) },
			want: "not a regular file (a directory)"},
		{name: "a symbolic link", make: func(t *testing.T, p string) { require.NoError(t, os.Symlink("/etc/passwd", p)) },
			want: "not a regular file (a symbolic link)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			writeCapture(t, s, "r1", callLine("c1", usage, "2.5"))
			p, err := s.ObservationsPath("r1")
			require.NoError(t, err)
			tt.make(t, p)
			out, sum, err := attachString(t, `{"_ng_rollout_id":"r1"}`+"\n", []*capture.Store{s}, Options{})
			require.NoError(t, err)
			assert.Empty(t, sum.ObservationErrors, "not an invalid bundle")
			require.Len(t, sum.ObservationReadErrors, 1)
			assert.Equal(t, 1, sum.ObservationReadErrors[0].Line)
			var re *ObservationsReadError
			require.ErrorAs(t, sum.ObservationReadErrors[0], &re)
			assert.Contains(t, re.Error(), "observations file of r1")
			assert.Contains(t, re.Error(), tt.want)
			assert.Equal(t, 1, sum.Attached)
			assert.NotContains(t, out, "ng_agent_observations")
		})
	}
}
