package rollout

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/baggage"
)

func TestFromRequest(t *testing.T) {
	tests := []struct {
		name       string
		path       string
		header     string
		baggage    string
		ctxBaggage string
		wantID     string
		wantSource Source
		wantErr    bool
	}{
		{name: "prefix", path: "/ng-rollout/a/v1/x", wantID: "a", wantSource: SourcePrefix},
		{name: "invalid prefix", path: "/ng-rollout/.a/v1/x", wantID: ".a", wantSource: SourcePrefix, wantErr: true},
		{name: "prefix with an encoded slash", path: "/ng-rollout/a%2Fb/v1/x", wantID: "a/b", wantSource: SourcePrefix, wantErr: true},
		{name: "header", path: "/v1/x", header: "h", wantID: "h", wantSource: SourceHeader},
		{name: "baggage header", path: "/v1/x", baggage: BaggageKey + "=b", wantID: "b", wantSource: SourceBaggage},
		{name: "percent-encoded baggage value", path: "/v1/x", baggage: BaggageKey + "=b%2Dc", wantID: "b-c", wantSource: SourceBaggage},
		{name: "baggage from the context", path: "/v1/x", ctxBaggage: "ctx-1", wantID: "ctx-1", wantSource: SourceBaggage},
		{name: "baggage header wins over context", path: "/v1/x", baggage: BaggageKey + "=b", ctxBaggage: "ctx-1", wantID: "b", wantSource: SourceBaggage},
		{name: "none", path: "/v1/x", wantSource: SourceNone},
		// One rollout per call, as for the header: never the last of several (from a fresh-user trial).
		{name: "baggage member twice", path: "/v1/x", baggage: BaggageKey + "=bg1," + BaggageKey + "=bg2", wantSource: SourceBaggage, wantErr: true},
		{name: "baggage member twice, properties and spaces", path: "/v1/x", baggage: BaggageKey + "=bg1;p=1 , other=x,  " + BaggageKey + " =bg1", wantSource: SourceBaggage, wantErr: true},
		{name: "another member twice", path: "/v1/x", baggage: "other=1,other=2," + BaggageKey + "=b", wantID: "b", wantSource: SourceBaggage},
		// A malformed header that names the rollout member is refused, not dropped (from a new-user
		// trial: "baggage: gymtrace.rollout_id" was forwarded uncaptured); one that does not is
		// ignored as W3C baggage says.
		{name: "rollout member without =", path: "/v1/x", baggage: BaggageKey, wantSource: SourceBaggage, wantErr: true},
		{name: "rollout member without =, with a property", path: "/v1/x", baggage: BaggageKey + ";p=1", wantSource: SourceBaggage, wantErr: true},
		{name: "rollout member beside a malformed one", path: "/v1/x", baggage: "broken," + BaggageKey + "=b", wantSource: SourceBaggage, wantErr: true},
		{name: "malformed header without the rollout member", path: "/v1/x", baggage: "broken,other=1", wantSource: SourceNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1"+tt.path, nil)
			if tt.header != "" {
				r.Header.Set("x-gymtrace-rollout-id", tt.header)
			}
			if tt.baggage != "" {
				r.Header.Set("baggage", tt.baggage)
			}
			if tt.ctxBaggage != "" {
				ctx, err := ContextWithID(r.Context(), tt.ctxBaggage)
				require.NoError(t, err)
				r = r.WithContext(ctx)
			}
			id, src, err := FromRequest(r)
			assert.Equal(t, tt.wantID, id)
			assert.Equal(t, tt.wantSource, src)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrInvalidID)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// A member repeated over two baggage header lines is refused too.
func TestFromRequestBaggageOverTwoLines(t *testing.T) {
	r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1/v1/x", nil)
	r.Header.Add("baggage", BaggageKey+"=bg1")
	r.Header.Add("baggage", BaggageKey+"=bg2")
	_, src, err := FromRequest(r)
	assert.Equal(t, SourceBaggage, src)
	require.ErrorIs(t, err, ErrInvalidID)
	assert.ErrorContains(t, err, "baggage member "+BaggageKey+": invalid rollout id: the member must appear once, got 2")
}

func TestContextWithID(t *testing.T) {
	m, err := baggage.NewMemberRaw("user", "alice")
	require.NoError(t, err)
	b, err := baggage.New(m)
	require.NoError(t, err)
	base := baggage.ContextWithBaggage(t.Context(), b)

	ctx, err := ContextWithID(base, "r-1")
	require.NoError(t, err)
	id, ok := IDFromContext(ctx)
	assert.True(t, ok)
	assert.Equal(t, "r-1", id)
	assert.Equal(t, "alice", baggage.FromContext(ctx).Member("user").Value(), "other members kept")

	ctx, err = ContextWithID(ctx, "r-2")
	require.NoError(t, err)
	id, _ = IDFromContext(ctx)
	assert.Equal(t, "r-2", id, "replaced")

	bad, err := ContextWithID(base, "no/slash")
	require.ErrorIs(t, err, ErrInvalidID)
	assert.Contains(t, err.Error(), `rollout baggage: invalid rollout id "no/slash": must match`)
	assert.Equal(t, base, bad, "ctx unchanged")
	_, ok = IDFromContext(base)
	assert.False(t, ok)
}

func FuzzFromRequest(f *testing.F) {
	f.Add("/v1/responses", "h-1", "gymtrace.rollout_id=b-1")
	f.Add("/ng-rollout/p/v1/messages", "", "")
	f.Add("/v1/chat/completions", "", "gymtrace.rollout_id=%20x,other=1")
	f.Add("/v1/x", "a\nb", "gymtrace.rollout_id")
	f.Fuzz(func(t *testing.T, path, header, bagHeader string) {
		r := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: path}, Header: http.Header{}}
		r = r.WithContext(context.Background())
		if header != "" {
			r.Header[Header] = []string{header}
		}
		if bagHeader != "" {
			r.Header["Baggage"] = []string{bagHeader}
		}
		id, src, err := FromRequest(r)
		if _, ok := ParsePrefix(path); ok {
			require.Equal(t, SourcePrefix, src, "the prefix wins")
		} else if header != "" {
			require.Equal(t, SourceHeader, src, "the header wins over baggage")
			require.Equal(t, header, id)
		}
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidID)
			return
		}
		if src == SourceNone {
			require.Empty(t, id)
			return
		}
		require.NoError(t, ValidateID(id), "an accepted id is always valid")
	})
}

func BenchmarkFromRequest(b *testing.B) {
	for _, tc := range []struct{ name, header, baggage string }{
		{name: "header", header: "task-3-1"},
		{name: "baggage", baggage: "user=x,gymtrace.rollout_id=task-3-1"},
		{name: "none"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/v1/responses", nil)
			if tc.header != "" {
				r.Header.Set(Header, tc.header)
			}
			if tc.baggage != "" {
				r.Header.Set("Baggage", tc.baggage)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := FromRequest(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
