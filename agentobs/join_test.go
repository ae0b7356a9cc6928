package agentobs

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// vectorCalls turns join.json's input.calls (the ModelCallRecord fields the join reads) into records.
func vectorCalls(t *testing.T, v ojson.Value) []capture.ModelCallRecord {
	t.Helper()
	require.Equal(t, ojson.KindArray, v.Kind())
	var calls []capture.ModelCallRecord
	for _, e := range v.Elems() {
		var c capture.ModelCallRecord
		for _, m := range e.Members() {
			switch m.Key {
			case "model_call_id", "response_id":
				var p *string
				if !m.Value.IsNull() {
					s, ok := m.Value.AsString()
					require.True(t, ok, "%s: %s", m.Key, m.Value)
					p = &s
				}
				if m.Key == "model_call_id" {
					c.ModelCallID = p
				} else {
					c.ResponseID = p
				}
			case "model_ref":
				if !m.Value.IsNull() {
					var ref ModelServerRef
					require.NoError(t, ref.UnmarshalJSON([]byte(m.Value.String())))
					c.ModelRef = &capture.ModelRef{Type: ref.Type, Name: ref.Name}
				}
			case "call_index":
				n, ok := m.Value.Int64()
				require.True(t, ok)
				c.CallIndex = int(n)
			default:
				t.Fatalf("unexpected call key %q", m.Key)
			}
		}
		calls = append(calls, c)
	}
	return calls
}

// TestJoinVectors runs testdata/vectors/join.json (SPEC §6.5): the joined bundle's JSON-mode dump
// must equal expected byte for byte, and joining it again must give it again (D11), also where the
// reference's own re-join differs (reference_rejoin_expected).
func TestJoinVectors(t *testing.T) {
	rejoins := referenceRejoins(t)
	for _, c := range testvectors.Load(t, "join.json") {
		t.Run(c.Name, func(t *testing.T) {
			in := testvectors.Value(t, c.Input)
			bundleJSON, ok := in.Get("bundle")
			require.True(t, ok)
			callsJSON, ok := in.Get("calls")
			require.True(t, ok)
			bundle := mustDecode(t, bundleJSON.String())
			calls := vectorCalls(t, callsJSON)
			before := encode(t, bundle)

			joined := Join(bundle, calls)
			want := testvectors.Canonical(t, c.Expected)
			require.Equal(t, want, encode(t, joined))
			require.NoError(t, joined.Validate())
			assert.Equal(t, before, encode(t, bundle), "Join must not modify its input")

			// D11: joining the joined bundle (and the decoded expected dump) again changes nothing.
			assert.Equal(t, want, encode(t, Join(joined, calls)))
			assert.Equal(t, want, encode(t, Join(mustDecode(t, want), calls)))
			if c.Deviation != "" {
				assert.Equal(t, "D11", c.Deviation)
				rejoin, ok := rejoins[c.Name]
				require.True(t, ok, "deviation case without reference_rejoin_expected")
				assert.NotEqual(t, rejoin.String(), want, "the reference's re-join differs from its join here; ours must not")
			}
		})
	}
}

// referenceRejoins reads join.json's reference_rejoin_expected values by case name (a key
// testvectors.Case does not carry).
func referenceRejoins(t *testing.T) map[string]ojson.Value {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testvectors.Dir(t, "vectors"), "join.json"))
	require.NoError(t, err)
	cases, ok := testvectors.Value(t, raw).Get("cases")
	require.True(t, ok)
	out := make(map[string]ojson.Value)
	for _, c := range cases.Elems() {
		name, _ := c.Get("name")
		if v, ok := c.Get("reference_rejoin_expected"); ok {
			s, _ := name.AsString()
			out[s] = v
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestSpecJoinVectors runs SPEC §8 #85–89, with the inputs written from the SPEC text.
func TestSpecJoinVectors(t *testing.T) {
	policyRef := `{"type":"responses_api_models","name":"policy"}`
	byResp := func(id string) string { return `{"model_ref":` + policyRef + `,"response_id":"` + id + `"}` }
	canon := func(id, resp string) string {
		return `{"model_call_id":"` + id + `","model_ref":` + policyRef + `,"response_id":"` + resp + `"}`
	}
	tests := []struct {
		name   string
		bundle string
		calls  []capture.ModelCallRecord
		check  func(t *testing.T, joined AgentObservationBundle)
	}{
		{
			name: "#85 exact reference resolved, unowned call reported",
			bundle: `{"source":"test","records":[{"kind":"agent_invocation","invocation_id":"root","model_calls":[` + byResp("resp-1") + `]}],
				"gaps":[{"code":"model_call_ownership_unavailable","detail":"direct_provider"},{"code":"model_call_ownership_unavailable","detail":"capture:stale"}]}`,
			calls: []capture.ModelCallRecord{call("call-1", "resp-1", "policy", 0), call("call-2", "", "policy", 1)},
			check: func(t *testing.T, j AgentObservationBundle) {
				assertRefs(t, `[`+canon("call-1", "resp-1")+`]`, j.Records[0].(*AgentInvocation).ModelCalls)
				var details []string
				for _, g := range j.Gaps {
					if g.Code == GapModelCallOwnershipUnavailable {
						details = append(details, nilStr(g.Detail))
					}
				}
				assert.Equal(t, []string{"direct_provider", "capture:call-2:call_index=1"}, details)
			},
		},
		{
			name:   "#86 ambiguous response id not guessed",
			bundle: `{"source":"test","records":[{"kind":"agent_invocation","invocation_id":"root","model_calls":[` + byResp("resp-1") + `]}]}`,
			calls:  []capture.ModelCallRecord{call("call-1", "resp-1", "policy", 0), call("call-2", "resp-1", "policy", 1)},
			check: func(t *testing.T, j AgentObservationBundle) {
				ref := j.Records[0].(*AgentInvocation).ModelCalls[0]
				assert.Nil(t, ref.ModelCallID)
				assert.Contains(t, gapTriples(j.Gaps), [3]string{GapModelCallReferenceAmbiguous, "root", "resp-1"})
				var details []string
				for _, g := range j.Gaps {
					if g.Code == GapModelCallOwnershipUnavailable {
						details = append(details, nilStr(g.Detail))
					}
				}
				assert.Equal(t, []string{"capture:call-1:call_index=0", "capture:call-2:call_index=1"}, details)
			},
		},
		{
			name: "#87 conflicting and unmatched references, idempotent",
			bundle: `{"source":"test","records":[{"kind":"agent_invocation","invocation_id":"root","model_calls":[{"model_call_id":"call-1"},` + byResp("resp-1") + `,{"model_call_id":"missing"}]}],
				"gaps":[{"code":"model_call_ownership_unavailable","invocation_id":"root","detail":"producer gap"}]}`,
			calls: []capture.ModelCallRecord{call("call-1", "resp-1", "policy", 0)},
			check: func(t *testing.T, j AgentObservationBundle) {
				assert.Equal(t, [][3]string{
					{GapModelCallOwnershipUnavailable, "root", "producer gap"},
					{GapModelCallReferenceConflict, "root", "call-1"},
					{GapModelCallReferenceUnmatched, "root", "missing"},
				}, gapTriples(j.Gaps))
				assertRefs(t, `[`+canon("call-1", "resp-1")+`,`+byRespFull("resp-1")+`,{"model_call_id":"missing","model_ref":null,"response_id":null}]`,
					j.Records[0].(*AgentInvocation).ModelCalls)
			},
		},
		{
			name: "#88 compaction boundaries owned by the invocation resolved",
			bundle: `{"source":"test","records":[
				{"kind":"agent_invocation","invocation_id":"root","model_calls":[` + byResp("before") + `,` + byResp("compaction") + `,` + byResp("after") + `]},
				{"kind":"context_compaction","invocation_id":"root","before_model_call":` + byResp("before") + `,"model_calls":[` + byResp("compaction") + `],"after_model_call":` + byResp("after") + `}]}`,
			calls: []capture.ModelCallRecord{call("call-before", "before", "policy", 0), call("call-compaction", "compaction", "policy", 1), call("call-after", "after", "policy", 2)},
			check: func(t *testing.T, j AgentObservationBundle) {
				c := j.Records[1].(*ContextCompactionObservation)
				assertRefs(t, `[`+canon("call-before", "before")+`]`, []ModelCallRef{*c.BeforeModelCall})
				assertRefs(t, `[`+canon("call-compaction", "compaction")+`]`, c.ModelCalls)
				assertRefs(t, `[`+canon("call-after", "after")+`]`, []ModelCallRef{*c.AfterModelCall})
				assert.Empty(t, j.Gaps)
			},
		},
		{
			name: "#89 cross-invocation compaction ownership rejected",
			bundle: `{"source":"test","records":[
				{"kind":"agent_invocation","invocation_id":"root"},
				{"kind":"agent_invocation","invocation_id":"other","model_calls":[` + byResp("owned") + `]},
				{"kind":"context_compaction","invocation_id":"root","before_model_call":` + byResp("owned") + `,"model_calls":[` + byResp("owned") + `,` + byResp("unowned") + `]}]}`,
			calls: []capture.ModelCallRecord{call("call-owned", "owned", "policy", 0), call("call-unowned", "unowned", "policy", 1)},
			check: func(t *testing.T, j AgentObservationBundle) {
				c := j.Records[2].(*ContextCompactionObservation)
				assert.Nil(t, c.BeforeModelCall.ModelCallID)
				for _, r := range c.ModelCalls {
					assert.Nil(t, r.ModelCallID)
				}
				var rootGaps [][3]string
				for _, g := range gapTriples(j.Gaps) {
					if g[1] == "root" {
						rootGaps = append(rootGaps, g)
					}
				}
				assert.ElementsMatch(t, [][3]string{
					{GapModelCallReferenceConflict, "root", "before_model_call:call-owned"},
					{GapModelCallReferenceConflict, "root", "model_calls:call-owned"},
					{GapModelCallOwnershipUnavailable, "root", "model_calls:call-unowned"},
				}, rootGaps)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustDecode(t, tt.bundle)
			joined := Join(b, tt.calls)
			tt.check(t, joined)
			assert.Equal(t, encode(t, joined), encode(t, Join(joined, tt.calls)), "join must be idempotent (D11)")
		})
	}
}

func byRespFull(id string) string {
	return `{"model_call_id":null,"model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"` + id + `"}`
}

// assertRefs compares refs with a JSON list of references.
func assertRefs(t *testing.T, want string, refs []ModelCallRef) {
	t.Helper()
	got := appendRefs(nil, refs)
	assert.Equal(t, testvectors.Canonical(t, []byte(want)), string(got))
}

func TestJoinEdges(t *testing.T) {
	t.Run("model_call_id reference narrowed by model_ref", func(t *testing.T) {
		b := AgentObservationBundle{Source: "s", Records: []Record{&AgentInvocation{InvocationID: "root", ModelCalls: []ModelCallRef{
			{ModelCallID: Ptr("c"), ModelRef: &ModelServerRef{Type: ModelRefTypeResponsesAPIModels, Name: "judge"}},
		}}}}
		j := Join(b, []capture.ModelCallRecord{call("c", "r", "policy", 0), call("c", "r", "judge", 1)})
		assertRefs(t, `[{"model_call_id":"c","model_ref":{"type":"responses_api_models","name":"judge"},"response_id":"r"}]`, j.Records[0].(*AgentInvocation).ModelCalls)
		assert.Equal(t, [][3]string{{GapModelCallOwnershipUnavailable, "<nil>", "capture:c:call_index=0"}}, gapTriples(j.Gaps))
	})
	t.Run("calls without identifiers are reported as unknown", func(t *testing.T) {
		j := Join(AgentObservationBundle{Source: "s"}, []capture.ModelCallRecord{call("", "", "", 4), call("", "resp", "", 5)})
		assert.Equal(t, [][3]string{
			{GapModelCallOwnershipUnavailable, "<nil>", "capture:unknown:call_index=4"},
			{GapModelCallOwnershipUnavailable, "<nil>", "capture:resp:call_index=5"},
		}, gapTriples(j.Gaps))
	})
	t.Run("empty model_call_id is not an id", func(t *testing.T) {
		b := AgentObservationBundle{Source: "s", Records: []Record{&AgentInvocation{InvocationID: "root", ModelCalls: []ModelCallRef{
			{ModelCallID: Ptr(""), ModelRef: &ModelServerRef{Type: ModelRefTypeResponsesAPIModels, Name: "policy"}, ResponseID: Ptr("r")},
		}}}}
		j := Join(b, []capture.ModelCallRecord{call("", "r", "policy", 0)})
		assertRefs(t, `[{"model_call_id":null,"model_ref":{"type":"responses_api_models","name":"policy"},"response_id":"r"}]`, j.Records[0].(*AgentInvocation).ModelCalls)
		assert.Empty(t, j.Gaps)
	})
	t.Run("compaction boundary owned by nobody resolves without ownership", func(t *testing.T) {
		b := AgentObservationBundle{Source: "s", Records: []Record{
			&ContextCompactionObservation{InvocationID: "root", AfterModelCall: Ptr(refByID("c")), ModelCalls: []ModelCallRef{refByID("missing"), refByID("dup")}},
		}}
		j := Join(b, []capture.ModelCallRecord{call("c", "", "", 0), call("dup", "", "", 1), call("dup", "", "", 2)})
		assert.Equal(t, [][3]string{
			{GapModelCallReferenceUnmatched, "root", "model_calls:missing"},
			{GapModelCallReferenceAmbiguous, "root", "model_calls:dup"},
			{GapModelCallOwnershipUnavailable, "<nil>", "capture:c:call_index=0"},
			{GapModelCallOwnershipUnavailable, "<nil>", "capture:dup:call_index=1"},
			{GapModelCallOwnershipUnavailable, "<nil>", "capture:dup:call_index=2"},
		}, gapTriples(j.Gaps))
		assert.Equal(t, "c", *j.Records[0].(*ContextCompactionObservation).AfterModelCall.ModelCallID)
	})
	t.Run("producer gaps deduplicated, other records untouched", func(t *testing.T) {
		tool := &ToolCallObservation{InvocationID: "root", ToolCallID: "t", DurationMS: Ptr(1.0)}
		b := AgentObservationBundle{Source: "s", Records: []Record{tool, nil}, Gaps: []ObservationGap{{Code: "x"}, {Code: "x"}, {Code: "x", Detail: Ptr("d")}}}
		j := Join(b, nil)
		assert.Equal(t, [][3]string{{"x", "<nil>", "<nil>"}, {"x", "<nil>", "d"}}, gapTriples(j.Gaps))
		assert.Equal(t, tool, j.Records[0])
		assert.NotSame(t, tool, j.Records[0])
		assert.Nil(t, j.Records[1])
	})
}

// TestJoinIdempotentProperty is SPEC D11 as a property: for random valid bundles and call lists,
// Join(Join(x)) == Join(x); the result is valid; the input is not modified; and the resolved
// references do not depend on the order of the captured calls (never by position).
func TestJoinIdempotentProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2026))
	for i := range 3000 {
		bundle := randomBundle(rng)
		require.NoError(t, bundle.Validate(), "generator made an invalid bundle")
		calls := randomCalls(rng)
		before := encode(t, bundle)

		once := Join(bundle, calls)
		onceJSON := encode(t, once)
		require.NoError(t, once.Validate(), "case %d: %s", i, onceJSON)
		require.Equal(t, before, encode(t, bundle), "case %d: input modified", i)
		twice := encode(t, Join(once, calls))
		require.Equal(t, onceJSON, twice, "case %d\nbundle %s\ncalls %v", i, before, describeCalls(calls))
		// A decoded dump joins the same way.
		require.Equal(t, onceJSON, encode(t, Join(mustDecode(t, onceJSON), calls)))

		shuffled := append([]capture.ModelCallRecord(nil), calls...)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		require.Equal(t, encodeRecords(t, once), encodeRecords(t, Join(bundle, shuffled)), "case %d: resolution depends on call order", i)
	}
}

func encodeRecords(t *testing.T, b AgentObservationBundle) string {
	b.Gaps = nil
	return encode(t, b)
}

func describeCalls(calls []capture.ModelCallRecord) string {
	s := ""
	for _, c := range calls {
		ref := "<nil>"
		if c.ModelRef != nil {
			ref = c.ModelRef.Name
		}
		s += fmt.Sprintf("(%s %s %s %d) ", nilStr(c.ModelCallID), nilStr(c.ResponseID), ref, c.CallIndex)
	}
	return s
}

var (
	propCallIDs     = []string{"", "c1", "c2", "c3"}
	propResponseIDs = []string{"", "r1", "r2"}
	propServers     = []string{"", "policy", "judge"}
	propInvocations = []string{"root", "a", "b", "ghost"}
)

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// pickOpt returns nil, a pointer to "" or a pointer to a non-empty pick.
func pickOpt(rng *rand.Rand, xs []string) *string {
	switch s := pick(rng, xs); {
	case s != "":
		return &s
	case rng.IntN(4) == 0:
		return Ptr("")
	}
	return nil
}

func randomRef(rng *rand.Rand) ModelCallRef {
	for {
		r := ModelCallRef{ModelCallID: pickOpt(rng, propCallIDs), ResponseID: pickOpt(rng, propResponseIDs)}
		if s := pick(rng, propServers); s != "" {
			r.ModelRef = &ModelServerRef{Type: ModelRefTypeResponsesAPIModels, Name: s}
		}
		if r.Validate() == nil {
			return r
		}
	}
}

func randomRefs(rng *rand.Rand) []ModelCallRef {
	var refs []ModelCallRef
	for range rng.IntN(4) {
		refs = append(refs, randomRef(rng))
	}
	return refs
}

func randomBundle(rng *rand.Rand) AgentObservationBundle {
	b := AgentObservationBundle{Source: "prop"}
	ids := rng.Perm(3)[:rng.IntN(4)]
	for _, k := range ids {
		b.Records = append(b.Records, &AgentInvocation{InvocationID: propInvocations[k], ModelCalls: randomRefs(rng)})
	}
	for range rng.IntN(3) {
		c := &ContextCompactionObservation{InvocationID: pick(rng, propInvocations), ModelCalls: randomRefs(rng)}
		if rng.IntN(2) == 0 {
			c.BeforeModelCall = Ptr(randomRef(rng))
		}
		if rng.IntN(2) == 0 {
			c.AfterModelCall = Ptr(randomRef(rng))
		}
		b.Records = append(b.Records, c)
	}
	if rng.IntN(3) == 0 {
		b.Records = append(b.Records, &ToolCallObservation{InvocationID: "root", ToolCallID: "t"})
	}
	rng.Shuffle(len(b.Records), func(i, j int) { b.Records[i], b.Records[j] = b.Records[j], b.Records[i] })
	codes := []string{GapModelCallOwnershipUnavailable, GapModelCallReferenceConflict, GapModelCallReferenceAmbiguous,
		GapModelCallReferenceUnmatched, "no_sandbox_runtime"}
	details := []string{"", "capture:c1:call_index=0", "capture:stale", "model_calls:c1", "before_model_call:c2",
		"after_model_call:r1", "direct_provider"}
	for range rng.IntN(5) {
		g := ObservationGap{Code: pick(rng, codes), Detail: optStr(pick(rng, details))}
		if rng.IntN(2) == 0 {
			g.InvocationID = Ptr(pick(rng, propInvocations))
		}
		b.Gaps = append(b.Gaps, g)
	}
	return b
}

func randomCalls(rng *rand.Rand) []capture.ModelCallRecord {
	var calls []capture.ModelCallRecord
	for i := range rng.IntN(6) {
		calls = append(calls, call(pick(rng, propCallIDs), pick(rng, propResponseIDs), pick(rng, propServers), i))
	}
	return calls
}

func BenchmarkJoin(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	bundle := AgentObservationBundle{Source: "bench"}
	var calls []capture.ModelCallRecord
	for i := range 200 {
		id := fmt.Sprintf("call-%d", i)
		calls = append(calls, call(id, fmt.Sprintf("resp-%d", i), "policy", i))
		inv := &AgentInvocation{InvocationID: fmt.Sprintf("inv-%d", i%10)}
		if i < 10 {
			bundle.Records = append(bundle.Records, inv)
		}
	}
	for i := range 200 {
		inv := bundle.Records[i%10].(*AgentInvocation)
		if rng.IntN(2) == 0 {
			inv.ModelCalls = append(inv.ModelCalls, refByID(fmt.Sprintf("call-%d", i)))
		} else {
			inv.ModelCalls = append(inv.ModelCalls, refByResponse(fmt.Sprintf("resp-%d", i)))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Join(bundle, calls)
	}
}
