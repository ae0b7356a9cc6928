package rollout

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"
)

func TestRolloutTraceIDDeterministic(t *testing.T) {
	// Pinned values (computed with Python's hashlib): changing them would orphan the traces of
	// rollouts already recorded.
	tests := []struct {
		id        string
		wantTrace string
		wantSpan  string
	}{
		{id: "3-1", wantTrace: "e39762d6698282a3e40c49ec8a777ecd", wantSpan: "b0d3fffb8fec4d46"},
		{id: "s7.0-0-a1", wantTrace: "a1941d18767c9f3b428fcf9d478b0e64", wantSpan: "c8fbf328c89b06a5"},
		{id: "", wantTrace: "b5107af76949350f7ebee02c69335faa", wantSpan: "b5655276ae631689"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			assert.Equal(t, tt.wantTrace, ID{Rollout: tt.id}.TraceID().String())
			assert.Equal(t, tt.wantSpan, ID{Rollout: tt.id}.RootSpanID().String())
			assert.Equal(t, ID{Rollout: tt.id}.TraceID(), ID{Rollout: tt.id}.TraceID(), "same id, same trace")
			sc := ID{Rollout: tt.id}.RootSpanContext()
			assert.True(t, sc.IsValid())
			assert.True(t, sc.IsRemote())
			assert.True(t, sc.IsSampled())
			assert.Equal(t, tt.wantTrace, sc.TraceID().String())
			assert.Equal(t, tt.wantSpan, sc.SpanID().String())
			assert.Equal(t, 0, sc.TraceState().Len())
		})
	}
	assert.NotEqual(t, ID{Rollout: "3-1"}.TraceID(), ID{Rollout: "3-1-a1"}.TraceID())
}

func TestParentForModelCall(t *testing.T) {
	const rollout = "4-2"
	member, err := baggage.NewMember("user", "alice")
	require.NoError(t, err)
	bag, err := baggage.New(member)
	require.NoError(t, err)
	base := baggage.ContextWithBaggage(t.Context(), bag)

	inRollout := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    ID{Rollout: rollout}.TraceID(),
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
		Remote:     true,
	})
	unsampledInRollout := inRollout.WithTraceFlags(0)
	foreign := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0xaa, 1},
		SpanID:     trace.SpanID{0xbb, 2},
		TraceFlags: trace.FlagsSampled,
		Remote:     true,
	})
	otherRollout := ID{Rollout: "4-3"}.RootSpanContext()

	tests := []struct {
		name       string
		ctx        context.Context
		wantParent trace.SpanContext
		wantLinks  []trace.SpanContext
	}{
		{name: "no incoming context", ctx: base, wantParent: ID{Rollout: rollout}.RootSpanContext()},
		{name: "incoming in the rollout trace", ctx: trace.ContextWithRemoteSpanContext(base, inRollout), wantParent: inRollout},
		{name: "unsampled incoming in the rollout trace", ctx: trace.ContextWithRemoteSpanContext(base, unsampledInRollout), wantParent: unsampledInRollout},
		{name: "foreign trace becomes a link", ctx: trace.ContextWithRemoteSpanContext(base, foreign), wantParent: ID{Rollout: rollout}.RootSpanContext(), wantLinks: []trace.SpanContext{foreign}},
		{name: "another rollout's trace becomes a link", ctx: trace.ContextWithRemoteSpanContext(base, otherRollout), wantParent: ID{Rollout: rollout}.RootSpanContext(), wantLinks: []trace.SpanContext{otherRollout}},
		{name: "local span in a foreign trace", ctx: trace.ContextWithSpanContext(base, foreign.WithRemote(false)), wantParent: ID{Rollout: rollout}.RootSpanContext(), wantLinks: []trace.SpanContext{foreign.WithRemote(false)}},
		{name: "invalid incoming context", ctx: trace.ContextWithSpanContext(base, trace.SpanContext{}), wantParent: ID{Rollout: rollout}.RootSpanContext()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, links := ID{Rollout: rollout}.ParentForModelCall(tt.ctx)
			assert.Equal(t, tt.wantParent, trace.SpanContextFromContext(parent))
			var got []trace.SpanContext
			for _, l := range links {
				got = append(got, l.SpanContext)
			}
			assert.Equal(t, tt.wantLinks, got)
			assert.Equal(t, "alice", baggage.FromContext(parent).Member("user").Value(), "baggage kept")
		})
	}
}
