package rollout

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
)

func TestIDTraceIDInRunGolden(t *testing.T) {
	// Pinned values computed independently with Python:
	// hashlib.sha256(("gymtrace/rollout/" + run + "/" + id).encode()).hexdigest()[:32] and [32:48].
	tests := []struct {
		run, id             string
		wantTrace, wantSpan string
	}{
		{run: "run-7", id: "3-1", wantTrace: "923a321df6834d9bd235de904917be84", wantSpan: "d738a03c0e7c112e"},
		{run: "2025.06.01_a", id: "s7.0-0-a1", wantTrace: "7175793d1832181f68fdd78d85e9d0f6", wantSpan: "9235bddd59f85e2e"},
		{run: "r", id: "", wantTrace: "df96a44928eeb696b1aef5acd84a99ce", wantSpan: "f72dcf2e0b8dbf6a"},
		// Without a run id the formula is unchanged (values of TestRolloutTraceIDDeterministic).
		{run: "", id: "3-1", wantTrace: "e39762d6698282a3e40c49ec8a777ecd", wantSpan: "b0d3fffb8fec4d46"},
		{run: "", id: "s7.0-0-a1", wantTrace: "a1941d18767c9f3b428fcf9d478b0e64", wantSpan: "c8fbf328c89b06a5"},
	}
	for _, tt := range tests {
		t.Run(tt.run+"/"+tt.id, func(t *testing.T) {
			assert.Equal(t, tt.wantTrace, ID{Run: tt.run, Rollout: tt.id}.TraceID().String())
			assert.Equal(t, tt.wantSpan, ID{Run: tt.run, Rollout: tt.id}.RootSpanID().String())
			sc := ID{Run: tt.run, Rollout: tt.id}.RootSpanContext()
			assert.Equal(t, tt.wantTrace, sc.TraceID().String())
			assert.Equal(t, tt.wantSpan, sc.SpanID().String())
			assert.True(t, sc.IsRemote())
			assert.True(t, sc.IsSampled())
			if tt.run == "" {
				assert.Equal(t, ID{Rollout: tt.id}.TraceID(), ID{Run: "", Rollout: tt.id}.TraceID())
				assert.Equal(t, ID{Rollout: tt.id}.RootSpanID(), ID{Run: "", Rollout: tt.id}.RootSpanID())
				assert.Equal(t, ID{Rollout: tt.id}.RootSpanContext(), sc)
			} else {
				assert.NotEqual(t, ID{Rollout: tt.id}.TraceID(), ID{Run: tt.run, Rollout: tt.id}.TraceID(), "a run namespace changes the trace")
			}
		})
	}
	assert.NotEqual(t, ID{Run: "a", Rollout: "1"}.TraceID(), ID{Run: "b", Rollout: "1"}.TraceID(), "two runs, two traces")
}

func TestIDParentForModelCallInRun(t *testing.T) {
	const run, id = "run-1", "4-2"
	inRun := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: ID{Run: run, Rollout: id}.TraceID(), SpanID: trace.SpanID{9}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	runless := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: ID{Rollout: id}.TraceID(), SpanID: trace.SpanID{8}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	tests := []struct {
		name       string
		incoming   trace.SpanContext
		wantParent trace.SpanContext
		wantLinks  []trace.SpanContext
	}{
		{name: "no incoming context", wantParent: ID{Run: run, Rollout: id}.RootSpanContext()},
		{name: "incoming in the run's rollout trace", incoming: inRun, wantParent: inRun},
		{name: "run-less trace of the same id is foreign", incoming: runless, wantParent: ID{Run: run, Rollout: id}.RootSpanContext(), wantLinks: []trace.SpanContext{runless}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			if tt.incoming.IsValid() {
				ctx = trace.ContextWithRemoteSpanContext(ctx, tt.incoming)
			}
			parent, links := ID{Run: run, Rollout: id}.ParentForModelCall(ctx)
			assert.Equal(t, tt.wantParent, trace.SpanContextFromContext(parent))
			var got []trace.SpanContext
			for _, l := range links {
				got = append(got, l.SpanContext)
			}
			assert.Equal(t, tt.wantLinks, got)
		})
	}
}

func TestValidateRun(t *testing.T) {
	tests := []struct {
		run     string
		wantErr string
	}{
		{run: "run-1"},
		{run: "2025.06.01_a"},
		{run: strings.Repeat("r", MaxIDBytes)},
		{run: "", wantErr: `invalid run id "": must match ^[A-Za-z0-9][A-Za-z0-9._-]*$`},
		{run: ".", wantErr: `invalid run id ".": must match`},
		{run: "..", wantErr: `invalid run id "..": must match`},
		{run: "a/b", wantErr: `invalid run id "a/b": must match`},
		{run: "-x", wantErr: `invalid run id "-x": must match`},
		{run: "x\n", wantErr: `invalid run id "x\n": must match`},
		{run: strings.Repeat("r", MaxIDBytes+1), wantErr: "longer than 200 bytes (201)"},
	}
	for _, tt := range tests {
		t.Run(tt.run, func(t *testing.T) {
			err := ValidateRun(tt.run)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidRun)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestRunDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "caps")
	tests := []struct {
		name, run, want, wantErr string
	}{
		{name: "no run: Gym's layout", run: "", want: dir},
		{name: "run subdirectory", run: "r1", want: filepath.Join(dir, "r1")},
		{name: "parent directory refused", run: "..", wantErr: `run capture dir: invalid run id "..": must match`},
		{name: "nested path refused", run: "a/../b", wantErr: `invalid run id "a/../b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RunDir(dir, tt.run)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidRun)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	assert.NoDirExists(t, dir, "never created")
}
