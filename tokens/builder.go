package tokens

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"

	"github.com/gymtrace/gymtrace/internal/python"
)

// The builders [RunBuilder] knows (TOKENS.md §3.4), in sorted order.
const (
	BuilderPerRequest    = "per_request"
	BuilderPrefixMerging = "prefix_merging"
)

// MainChainID is the chain_id of the chain [PrefixMerging] delivers; the others are "branch-0",
// "branch-1", ... (TOKENS.md §3.4 step 5).
const MainChainID = "main"

// ChainLink is one call of a [Chain]: its entry and the prompt tokens added since the previous
// link's prompt + generation (empty for the first link; TOKENS.md §3.4 step 4). Entry points into
// the slice the builder was given.
type ChainLink struct {
	Entry        *TokenEntry
	Interstitial []int64
}

// Chain is a root-to-leaf path of calls whose prompts extend each other (TOKENS.md §3.4).
type Chain struct {
	ChainID    string
	Links      []ChainLink
	RootPrompt []int64
}

// Validate is the reference's Chain.validate (TOKENS.md §3.4): every link needs one log
// probability per generated token. The error is a ValueError [*Error] "log-prob/token length
// mismatch on <model_call_id>: <log probs> vs <tokens>".
func (c *Chain) Validate() error {
	for _, l := range c.Links {
		if lp, gen := len(l.Entry.GenerationLogProbs), len(l.Entry.GenerationTokenIDs); lp != gen {
			return pyErr("ValueError", fmt.Sprintf("log-prob/token length mismatch on %s: %d vs %d", l.Entry.ModelCallID, lp, gen), nil)
		}
	}
	return nil
}

// BuildNotes says what a build kept, dropped or could not resolve (TOKENS.md §3.4 step 6). Token
// counts are generated tokens; DeliveredFraction is delivered/captured rounded as Python's
// round(x, 4) (0 when nothing was captured). [PerRequest] sets only Builder and Chains.
type BuildNotes struct {
	Builder                  string
	Roots                    int
	Chains                   int
	GeneratedTokensCaptured  int
	GeneratedTokensDelivered int
	DeliveredFraction        float64
	UnresolvedRetries        []string // model_call_ids of retry siblings no later call tells apart
	EmptyGenerationCalls     []string // model_call_ids of calls without generated tokens (left out)
}

// BuildOutput is a builder's result (TOKENS.md §3.4): the chains, the model_call_ids of the
// quarantined calls (in the order they were quarantined; a call id twice in the input can appear
// once here and still be delivered, TOKENS.md §6 item 9) and the notes.
type BuildOutput struct {
	Chains      []Chain
	Quarantined []string
	Notes       BuildNotes
}

// RunBuilder runs the builder called name over entries (TOKENS.md §3.4): [BuilderPrefixMerging]
// or [BuilderPerRequest]. Any other name is a ValueError [*Error] "unknown builder '<name>';
// known: ['per_request', 'prefix_merging']". entries are not modified; the chains point into them.
func RunBuilder(entries []TokenEntry, name string) (BuildOutput, error) {
	switch name {
	case BuilderPrefixMerging:
		return PrefixMerging(entries), nil
	case BuilderPerRequest:
		return PerRequest(entries), nil
	}
	return BuildOutput{}, pyErr("ValueError", "unknown builder "+python.ReprStr(name)+"; known: ['"+BuilderPerRequest+"', '"+BuilderPrefixMerging+"']", nil)
}

// PerRequest is the reference's per_request builder (TOKENS.md §3.4): one chain "req-<i>" per
// entry, in the order of (len(prompt), model_call_id), each with one link and the entry's prompt
// as its root prompt. Its notes hold only the builder's name and the chain count.
func PerRequest(entries []TokenEntry) BuildOutput {
	ordered := sortedEntries(entries, nil)
	chains := make([]Chain, len(ordered))
	for i, e := range ordered {
		chains[i] = Chain{ChainID: "req-" + strconv.Itoa(i), Links: []ChainLink{{Entry: e, Interstitial: []int64{}}}, RootPrompt: e.PromptTokenIDs}
	}
	return BuildOutput{Chains: chains, Quarantined: []string{}, Notes: BuildNotes{Builder: BuilderPerRequest, Chains: len(chains), UnresolvedRetries: []string{}, EmptyGenerationCalls: []string{}}}
}

// sortedEntries returns pointers to the entries that keep passes, ordered by (len(prompt),
// model_call_id) — the reference's order everywhere (TOKENS.md §3.4), stable for full ties.
func sortedEntries(entries []TokenEntry, keep func(*TokenEntry) bool) []*TokenEntry {
	out := make([]*TokenEntry, 0, len(entries))
	for i := range entries {
		if keep == nil || keep(&entries[i]) {
			out = append(out, &entries[i])
		}
	}
	slices.SortStableFunc(out, func(a, b *TokenEntry) int {
		return cmp.Or(cmp.Compare(len(a.PromptTokenIDs), len(b.PromptTokenIDs)), cmp.Compare(a.ModelCallID, b.ModelCallID))
	})
	return out
}

// mergeNode is one call in prefix_merging's forest.
type mergeNode struct {
	entry       *TokenEntry
	parent      *mergeNode
	children    []*mergeNode
	quarantined bool
}

// PrefixMerging is the reference's prefix_merging builder (TOKENS.md §3.4): it chains calls whose
// prompt extends an earlier call's prompt + generation, so an append-only rollout becomes one
// chain. In order:
//
//  1. Calls without generated tokens are left out (EmptyGenerationCalls, input order).
//  2. In (len(prompt), model_call_id) order, a call's parent is the processed call whose prompt +
//     generation is the longest prefix of its prompt (equality allowed; a prefix of a parent's
//     prompt alone never matches). Several such calls with the same sequence make the call
//     ambiguous: it is quarantined but attached to the first. A call without a parent is a root.
//  3. Retries: siblings (same parent, or both roots) with identical prompts are told apart by
//     extension: those with a child that is not quarantined are kept; when none has one, the
//     smallest model_call_id is kept and all of them are reported in UnresolvedRetries. The
//     others are quarantined.
//  4. Every root-to-leaf path without a quarantined call is a chain.
//  5. The chain whose root has the smallest (created_at, model_call_id) is "main", the others
//     "branch-<i>" in chain order.
//
// Parents are found with a compressed trie over the calls' prompt + generation sequences, so a
// build costs time linear in the total number of prompt tokens (plus the branching of the trie).
// entries are not modified; the chains point into them.
func PrefixMerging(entries []TokenEntry) BuildOutput {
	notes := BuildNotes{Builder: BuilderPrefixMerging, UnresolvedRetries: []string{}, EmptyGenerationCalls: []string{}}
	for i := range entries {
		if len(entries[i].GenerationTokenIDs) == 0 {
			notes.EmptyGenerationCalls = append(notes.EmptyGenerationCalls, entries[i].ModelCallID)
		}
	}
	ordered := sortedEntries(entries, func(e *TokenEntry) bool { return len(e.GenerationTokenIDs) > 0 })
	out := BuildOutput{Chains: []Chain{}, Quarantined: []string{}}
	if len(ordered) == 0 {
		out.Notes = notes
		return out
	}

	// Step 2: parents.
	nodes := make([]*mergeNode, len(ordered))
	var index prefixTrie
	for i, e := range ordered {
		n := &mergeNode{entry: e}
		if parent, ambiguous := index.longestPrefix(e.PromptTokenIDs); parent != nil {
			n.parent = parent
			if ambiguous {
				n.quarantined = true
				out.Quarantined = append(out.Quarantined, e.ModelCallID)
			}
			parent.children = append(parent.children, n)
		} else {
			notes.Roots++
		}
		nodes[i] = n
		index.insert(e.PromptTokenIDs, e.GenerationTokenIDs, n)
	}

	// Step 3: retry siblings.
	keep := func(n *mergeNode) bool { return !n.quarantined }
	for _, group := range siblingGroups(nodes) {
		for _, retry := range samePromptGroups(group) {
			var kept []*mergeNode
			for _, n := range retry {
				if slices.ContainsFunc(n.children, keep) {
					kept = append(kept, n)
				}
			}
			if len(kept) == 0 {
				kept = []*mergeNode{slices.MinFunc(retry, func(a, b *mergeNode) int { return cmp.Compare(a.entry.ModelCallID, b.entry.ModelCallID) })}
				for _, n := range retry {
					notes.UnresolvedRetries = append(notes.UnresolvedRetries, n.entry.ModelCallID)
				}
			}
			for _, n := range retry {
				if !n.quarantined && !slices.Contains(kept, n) {
					n.quarantined = true
					out.Quarantined = append(out.Quarantined, n.entry.ModelCallID)
				}
			}
		}
	}

	// Step 4: chains.
	for _, leaf := range nodes {
		if len(leaf.children) > 0 {
			continue
		}
		if c, ok := chainTo(leaf); ok {
			out.Chains = append(out.Chains, c)
		}
	}

	// Step 5: the main chain.
	if len(out.Chains) > 0 {
		main := 0
		for i := 1; i < len(out.Chains); i++ {
			if chainBefore(out.Chains[i], out.Chains[main]) {
				main = i
			}
		}
		branch := 0
		for i := range out.Chains {
			if i == main {
				out.Chains[i].ChainID = MainChainID
				continue
			}
			out.Chains[i].ChainID = "branch-" + strconv.Itoa(branch)
			branch++
		}
		for _, l := range out.Chains[main].Links {
			notes.GeneratedTokensDelivered += len(l.Entry.GenerationTokenIDs)
		}
	}

	// Step 6: notes.
	notes.Chains = len(out.Chains)
	for _, e := range ordered {
		notes.GeneratedTokensCaptured += len(e.GenerationTokenIDs)
	}
	if notes.GeneratedTokensCaptured > 0 {
		notes.DeliveredFraction = roundPython(float64(notes.GeneratedTokensDelivered)/float64(notes.GeneratedTokensCaptured), 4)
	}
	out.Notes = notes
	return out
}

// chainBefore orders chains by their root's (created_at, model_call_id) (TOKENS.md §3.4 step 5).
func chainBefore(a, b Chain) bool {
	ra, rb := a.Links[0].Entry, b.Links[0].Entry
	if ra.CreatedAt != rb.CreatedAt {
		return ra.CreatedAt < rb.CreatedAt
	}
	return ra.ModelCallID < rb.ModelCallID
}

// siblingGroups groups nodes by parent (all roots together), groups in order of first appearance
// (TOKENS.md §3.4 step 3).
func siblingGroups(nodes []*mergeNode) [][]*mergeNode {
	var groups [][]*mergeNode
	at := make(map[*mergeNode]int) // parent (nil: the roots) -> index in groups
	for _, n := range nodes {
		i, ok := at[n.parent]
		if !ok {
			i = len(groups)
			at[n.parent] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], n)
	}
	return groups
}

// samePromptGroups returns the sub-groups of group with identical prompts that have two members
// or more, in order of first appearance. Prompts are hashed once, so a group costs time linear in
// its prompts' lengths.
func samePromptGroups(group []*mergeNode) [][]*mergeNode {
	if len(group) < 2 {
		return nil
	}
	seed := maphash.MakeSeed()
	var subs [][]*mergeNode
	byHash := make(map[uint64][]int) // prompt hash -> indices into subs
	for _, n := range group {
		h := hashTokens(seed, n.entry.PromptTokenIDs)
		at := slices.IndexFunc(byHash[h], func(i int) bool { return slices.Equal(subs[i][0].entry.PromptTokenIDs, n.entry.PromptTokenIDs) })
		if at >= 0 {
			subs[byHash[h][at]] = append(subs[byHash[h][at]], n)
			continue
		}
		byHash[h] = append(byHash[h], len(subs))
		subs = append(subs, []*mergeNode{n})
	}
	return slices.DeleteFunc(subs, func(s []*mergeNode) bool { return len(s) < 2 })
}

// hashTokens hashes a token sequence with seed.
func hashTokens(seed maphash.Seed, tokens []int64) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var buf [512]byte
	b := buf[:0]
	for _, t := range tokens {
		b = binary.LittleEndian.AppendUint64(b, uint64(t))
		if len(b) == len(buf) {
			_, _ = h.Write(b)
			b = buf[:0]
		}
	}
	_, _ = h.Write(b)
	return h.Sum64()
}

// chainTo returns the chain from leaf's root to leaf, and false when a call on it is quarantined
// (TOKENS.md §3.4 step 4).
func chainTo(leaf *mergeNode) (Chain, bool) {
	var path []*mergeNode
	for n := leaf; n != nil; n = n.parent {
		if n.quarantined {
			return Chain{}, false
		}
		path = append(path, n)
	}
	slices.Reverse(path)
	c := Chain{RootPrompt: path[0].entry.PromptTokenIDs, Links: make([]ChainLink, len(path))}
	prev := 0 // len(prompt + generation) of the previous link
	for k, n := range path {
		inter := []int64{}
		if k > 0 && prev < len(n.entry.PromptTokenIDs) {
			inter = n.entry.PromptTokenIDs[prev:len(n.entry.PromptTokenIDs):len(n.entry.PromptTokenIDs)]
		}
		c.Links[k] = ChainLink{Entry: n.entry, Interstitial: inter}
		prev = len(n.entry.PromptTokenIDs) + len(n.entry.GenerationTokenIDs)
	}
	return c, true
}

// roundPython is Python's round(x, digits): the float nearest to x's decimal text rounded
// correctly to digits places (TOKENS.md §3.4 step 6). NaN and ±Inf are returned as they are.
func roundPython(x float64, digits int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', digits, 64), 64)
	if err != nil {
		return x
	}
	return r
}

// prefixTrie is prefix_merging's parent index (TOKENS.md §3.4 step 2): a compressed trie over the
// token sequences (prompt + generation) of the calls processed so far. A node that ends one or more
// sequences holds their calls in insertion order.
type prefixTrie struct {
	root trieNode
}

type trieNode struct {
	label    []int64 // the tokens on the edge into this node
	children []*trieNode
	calls    []*mergeNode
}

// child returns n's child whose label starts with token, or nil.
func (n *trieNode) child(token int64) *trieNode {
	for _, c := range n.children {
		if c.label[0] == token {
			return c
		}
	}
	return nil
}

// longestPrefix returns the first call of the deepest node on prompt's path that ends a sequence —
// the call whose sequence is the longest prefix of prompt (equality allowed) — and whether that
// node holds more than one call (ambiguous); nil when no sequence is a prefix of prompt.
func (t *prefixTrie) longestPrefix(prompt []int64) (*mergeNode, bool) {
	var best *trieNode
	n, depth := &t.root, 0
	for {
		if len(n.calls) > 0 {
			best = n
		}
		if depth == len(prompt) {
			break
		}
		c := n.child(prompt[depth])
		if c == nil || len(c.label) > len(prompt)-depth || !slices.Equal(c.label, prompt[depth:depth+len(c.label)]) {
			break
		}
		n, depth = c, depth+len(c.label)
	}
	if best == nil {
		return nil, false
	}
	return best.calls[0], len(best.calls) > 1
}

// insert adds the sequence prompt + generation, ending at call.
func (t *prefixTrie) insert(prompt, generation []int64, call *mergeNode) {
	seq := tokenPair{prompt, generation}
	n, depth := &t.root, 0
	for depth < seq.len() {
		c := n.child(seq.at(depth))
		if c == nil {
			n.children = append(n.children, &trieNode{label: seq.copyFrom(depth), calls: []*mergeNode{call}})
			return
		}
		k := seq.commonPrefix(depth, c.label) // at least 1: c.label[0] matched
		if k < len(c.label) {
			// Split c's edge after k tokens.
			mid := &trieNode{label: c.label[:k:k], children: []*trieNode{c}}
			c.label = c.label[k:]
			n.children[slices.Index(n.children, c)] = mid
			c = mid
		}
		n, depth = c, depth+k
	}
	n.calls = append(n.calls, call)
}

// tokenPair is the concatenation of two token slices, read without copying them.
type tokenPair struct{ a, b []int64 }

func (p tokenPair) len() int { return len(p.a) + len(p.b) }

func (p tokenPair) at(i int) int64 {
	if i < len(p.a) {
		return p.a[i]
	}
	return p.b[i-len(p.a)]
}

// commonPrefix returns how many tokens of label equal the tokens from i on.
func (p tokenPair) commonPrefix(i int, label []int64) int {
	k := 0
	if i < len(p.a) {
		a := p.a[i:]
		for k < len(a) && k < len(label) && a[k] == label[k] {
			k++
		}
		if k < len(a) || k == len(label) {
			return k
		}
		i = len(p.a)
	}
	b, rest := p.b[i-len(p.a):], label[k:]
	j := 0
	for j < len(b) && j < len(rest) && b[j] == rest[j] {
		j++
	}
	return k + j
}

// copyFrom returns a copy of the tokens from i on.
func (p tokenPair) copyFrom(i int) []int64 {
	out := make([]int64, 0, p.len()-i)
	if i < len(p.a) {
		out = append(out, p.a[i:]...)
		return append(out, p.b...)
	}
	return append(out, p.b[i-len(p.a):]...)
}
