package tokens

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// buildValue renders a BuildOutput in the vectors' shape (the reference's dataclasses as dicts,
// links by model_call_id).
func buildValue(out BuildOutput) ojson.Value {
	ints := func(ts []int64) ojson.Value { return ojson.Array(tokenValues(nil, ts)...) }
	strs := func(ss []string) ojson.Value {
		vs := make([]ojson.Value, len(ss))
		for i, s := range ss {
			vs[i] = ojson.String(s)
		}
		return ojson.Array(vs...)
	}
	chains := make([]ojson.Value, len(out.Chains))
	for i, c := range out.Chains {
		links := make([]ojson.Value, len(c.Links))
		for j, l := range c.Links {
			links[j] = ojson.Object(
				ojson.Member{Key: "model_call_id", Value: ojson.String(l.Entry.ModelCallID)},
				ojson.Member{Key: "interstitial", Value: ints(l.Interstitial)},
			)
		}
		chains[i] = ojson.Object(
			ojson.Member{Key: "chain_id", Value: ojson.String(c.ChainID)},
			ojson.Member{Key: "root_prompt", Value: ints(c.RootPrompt)},
			ojson.Member{Key: "links", Value: ojson.Array(links...)},
		)
	}
	n := out.Notes
	num := func(key string, v int) ojson.Member { return ojson.Member{Key: key, Value: ojson.Int(int64(v))} }
	return ojson.Object(
		ojson.Member{Key: "chains", Value: ojson.Array(chains...)},
		ojson.Member{Key: "quarantined", Value: strs(out.Quarantined)},
		ojson.Member{Key: "notes", Value: ojson.Object(
			ojson.Member{Key: "builder", Value: ojson.String(n.Builder)},
			num("roots", n.Roots),
			num("chains", n.Chains),
			num("generated_tokens_captured", n.GeneratedTokensCaptured),
			num("generated_tokens_delivered", n.GeneratedTokensDelivered),
			ojson.Member{Key: "delivered_fraction", Value: ojson.Float(n.DeliveredFraction)},
			ojson.Member{Key: "unresolved_retries", Value: strs(n.UnresolvedRetries)},
			ojson.Member{Key: "empty_generation_calls", Value: strs(n.EmptyGenerationCalls)},
		)},
	)
}

// TestBuilderVectors runs the BL group: run_builder, Chain.validate, project_main_chain_response,
// assert_prefix_contiguity and project_chain_to_output_items per chain (TOKENS.md §3.4–3.5).
func TestBuilderVectors(t *testing.T) {
	cases := tokenCases(t, "BL")
	require.Len(t, cases, 26)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in, want := c.Input, c.Expected
			if links, ok := in.Get("links"); ok { // Chain.validate on hand-made links
				var chain Chain
				for _, l := range links.Elems() {
					e := vectorEntry(t, l)
					chain.Links = append(chain.Links, ChainLink{Entry: &e})
				}
				assertException(t, want, chain.Validate())
				return
			}
			entries := vectorEntries(t, get(t, in, "entries"))
			name, _ := get(t, in, "builder").AsString()
			out, err := RunBuilder(entries, name)
			wantBuild := get(t, want, "build")
			if _, isErr := wantBuild.Get("error"); isErr {
				assertException(t, wantBuild, err)
				return
			}
			require.NoError(t, err)
			assertJSON(t, wantBuild, buildValue(out), "build")
			for _, ch := range out.Chains {
				assert.NoError(t, ch.Validate())
			}

			model, _ := get(t, in, "model").AsString()
			resp, err := ProjectMainChainResponse(entries[0].RolloutID, out, model)
			wantResp := get(t, want, "project_main_chain_response")
			if _, isErr := wantResp.Get("error"); isErr {
				assertException(t, wantResp, err)
			} else {
				require.NoError(t, err)
				assertJSON(t, wantResp, resp, "project_main_chain_response")
			}
			if ok, present := want.Get("assert_prefix_contiguity"); present {
				require.Equal(t, `"ok"`, ok.String())
				assert.NoError(t, AssertPrefixContiguity(resp))
			}

			perChain := get(t, want, "per_chain_items").Elems()
			require.Len(t, perChain, len(out.Chains))
			for i, ch := range out.Chains {
				items, err := ProjectChainToOutputItems(ch)
				require.NoError(t, err)
				assertJSON(t, perChain[i], ojson.Array(items...), "chain %s", ch.ChainID)
			}
		})
	}
}

// TestPrefixContiguityVectors runs the PC group (TOKENS.md §3.5).
func TestPrefixContiguityVectors(t *testing.T) {
	cases := tokenCases(t, "PC")
	require.Len(t, cases, 6)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in, want := c.Input, c.Expected
			err := AssertPrefixContiguity(get(t, in, "response"))
			if want.Kind() == ojson.KindString {
				assert.NoError(t, err)
				return
			}
			assertException(t, want, err)
		})
	}
}

func TestAssertPrefixContiguityPythonEquality(t *testing.T) {
	for _, tc := range []struct {
		name, response string
		class          string // "" for success
	}{
		{"numbers compare by value", `{"output":[{"prompt_token_ids":[1],"generation_token_ids":[2]},{"prompt_token_ids":[true,2.0,3],"generation_token_ids":[4]}]}`, ""},
		{"string prompt", `{"output":[{"prompt_token_ids":"ab","generation_token_ids":[2]}]}`, "AssertionError"},
		{"number prompt", `{"output":[{"prompt_token_ids":7,"generation_token_ids":[2]}]}`, "TypeError"},
		{"null output", `{"output":null}`, "TypeError"},
		{"object output", `{"output":{"generation_token_ids":[1]}}`, ""},
		{"string generation", `{"output":[{"prompt_token_ids":[1],"generation_token_ids":"x"}]}`, "TypeError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := AssertPrefixContiguity(testvectors.Value(t, []byte(tc.response)))
			if tc.class == "" {
				assert.NoError(t, err)
				return
			}
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.class, e.Type)
		})
	}
}

// TestPrefixMergingSharesPromptArrays checks that projected prompts are cut from one sequence (the
// memory claim of ProjectChainToOutputItems) and that editing one item's array does not reach
// the next item's.
func TestPrefixMergingSharesPromptArrays(t *testing.T) {
	entries := appendOnlyRollout(4, 8)
	out := PrefixMerging(entries)
	require.Len(t, out.Chains, 1)
	items, err := ProjectChainToOutputItems(out.Chains[0])
	require.NoError(t, err)
	require.Len(t, items, 4)
	first, _ := items[0].Get(keyPromptTokenIDs)
	second, _ := items[1].Get(keyPromptTokenIDs)
	require.Less(t, first.Len(), second.Len())
	assert.Same(t, &first.Elems()[0], &second.Elems()[0], "one backing sequence")
	grown := append(first.Elems(), ojson.Int(-1))
	assert.NotEqual(t, grown[len(grown)-1].String(), second.Elems()[first.Len()].String(), "a prompt has no spare capacity")
}

// appendOnlyRollout returns calls of an append-only rollout: call k's prompt is call k-1's prompt
// + generation + 3 tokens of tool output; prompts start at promptLen tokens, generations are 16.
func appendOnlyRollout(calls, promptLen int) []TokenEntry {
	prompt := make([]int64, promptLen)
	for i := range prompt {
		prompt[i] = int64(i % 50000)
	}
	entries := make([]TokenEntry, calls)
	next := int64(100000)
	for k := range entries {
		gen := make([]int64, 16)
		lps := make([]float64, 16)
		for i := range gen {
			gen[i], lps[i] = next, -0.5
			next++
		}
		entries[k] = TokenEntry{SchemaVersion: 1, RolloutID: "r", ModelCallID: fmt.Sprintf("c%03d", k),
			PromptTokenIDs: prompt, GenerationTokenIDs: gen, GenerationLogProbs: lps, CreatedAt: float64(k)}
		prompt = append(append(append([]int64(nil), prompt...), gen...), next, next+1, next+2)
		next += 3
	}
	return entries
}

// BenchmarkPrefixMerging builds a 200-call append-only rollout whose prompts are 32k tokens and
// more (the last is about 36k), then projects and checks its main chain as the consumer does.
func BenchmarkPrefixMerging(b *testing.B) {
	entries := appendOnlyRollout(200, 32768)
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if out := PrefixMerging(entries); len(out.Chains) != 1 {
				b.Fatal(out.Notes)
			}
		}
	})
	b.Run("build+project+check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp, err := ProjectMainChainResponse("r", PrefixMerging(entries), "")
			if err == nil {
				err = AssertPrefixContiguity(resp)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzPrefixMerging builds arbitrary small rollouts: nothing panics, the notes agree with the
// chains, and every chain — not only the main one — projects to prefix-contiguous items.
func FuzzPrefixMerging(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3, 2, 4, 5, 7, 1, 2, 3, 4, 5, 6, 1, 7})
	f.Add([]byte{2, 1, 2, 2, 7, 8, 2, 1, 2, 2, 7, 8, 5, 1, 2, 7, 8, 9, 1, 20})
	f.Add([]byte{2, 1, 2, 0, 3, 1, 2, 3, 1, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		entries := fuzzEntries(data)
		out := PrefixMerging(entries)
		assert.Equal(t, len(out.Chains), out.Notes.Chains)
		for _, c := range out.Chains {
			require.NoError(t, c.Validate())
			items, err := ProjectChainToOutputItems(c)
			require.NoError(t, err)
			require.NoError(t, AssertPrefixContiguity(ojson.Object(ojson.Member{Key: "output", Value: ojson.Array(items...)})), "chain %s", c.ChainID)
		}
		if resp, err := ProjectMainChainResponse("r", out, ""); err == nil {
			require.NoError(t, AssertPrefixContiguity(resp))
		} else {
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "ValueError", e.Type)
		}
		_ = PerRequest(entries)
	})
}

// fuzzEntries reads calls from data: per call a prompt length, the prompt, a generation length
// and the generation, all bytes as tokens from a small alphabet so prefixes collide often; call
// ids repeat every 5 calls, created_at every 3.
func fuzzEntries(data []byte) []TokenEntry {
	var entries []TokenEntry
	take := func() ([]int64, bool) {
		if len(data) == 0 {
			return nil, false
		}
		n := int(data[0] % 8)
		data = data[1:]
		n = min(n, len(data))
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(data[i] % 6)
		}
		data = data[n:]
		return out, true
	}
	for len(entries) < 40 {
		prompt, ok := take()
		if !ok {
			break
		}
		gen, _ := take()
		k := len(entries)
		entries = append(entries, TokenEntry{RolloutID: "r", ModelCallID: fmt.Sprintf("c%d", k%5), PromptTokenIDs: prompt,
			GenerationTokenIDs: gen, GenerationLogProbs: make([]float64, len(gen)), CreatedAt: float64(k % 3)})
	}
	return entries
}
