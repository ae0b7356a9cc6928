package claudecode

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// compactionPromptMarkers are the texts Claude Code's summarization prompt ends with (SPEC §6.6).
var compactionPromptMarkers = []string{
	"Your task is to create a detailed summary of this conversation.",
	"Your task is to create a detailed summary of the conversation so far",
	"Your task is to create a detailed summary of the RECENT portion of the conversation",
}

// compactionSummaryPrefix starts every summary Claude Code stores after a compaction (SPEC §6.6).
const compactionSummaryPrefix = "This session is being continued from a previous conversation that ran out of context. " +
	"The summary below covers the earlier portion of the conversation.\n\n"

// compactionSuffix matches what Claude Code may append after the model's summary, in this order,
// each optional: the transcript-path hint, the verbatim notice, the REPL-cleared notice and the
// continue-without-asking instruction (SPEC §6.6); it must match the whole remainder.
var compactionSuffix = regexp.MustCompile(`\A` +
	`(?:\n\nIf you need specific details from before compaction \(like exact code snippets, error messages, or content you generated\), read the full transcript at: [^\n]+)?` +
	`(?:\n\nRecent messages are preserved verbatim\.)?` +
	`(?:\n\nYour REPL VM state has been cleared as part of this compaction\. Variables defined in REPL calls before this point are no longer accessible — redefine any you still need\.)?` +
	`(?:\n\nContinue the conversation from where it left off without asking the user any further questions\. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with "I'll continue" or similar\. Pick up the last task as if the break never happened\.)?` +
	`\z`)

var (
	analysisBlock = regexp.MustCompile(`(?s)<analysis>.*?</analysis>`)
	summaryBlock  = regexp.MustCompile(`(?s)<summary>(.*?)</summary>`)
	blankRuns     = regexp.MustCompile(`\n\n+`)
)

// AssociateCompactionCalls links each Claude Code compaction of bundle to the hidden call that
// wrote its summary, by exact evidence only (SPEC §6.6), and returns the result; bundle itself is
// not modified. It runs only when bundle.Source is "claude_code" (otherwise bundle is returned
// unchanged, as a deep copy).
//
// A call is a candidate for a compaction when: no invocation reference matches it; the compaction
// completed, has no model_calls yet and has a summary; the call is a 2xx Anthropic Messages call
// without error category, identifiable (model_call_id, or model_ref and response_id) and on the
// model server of the compaction's before/after references when they name one; its request's last
// message is a user message containing one of Claude Code's summarization prompts; the text of its
// response, normalized as Claude Code does (the first <analysis> block removed, the first
// <summary>X</summary> replaced by "Summary:\nX", blank-line runs collapsed, trimmed), is exactly
// the stored summary after Claude Code's fixed prefix and before its known suffixes; and its
// call_index lies strictly between those of the before and after references (a boundary reference
// that does not resolve to exactly one call rules every call out).
//
// A compaction with exactly one candidate that no other compaction shares gets that call's
// canonical reference as its model_calls, and the same reference is inserted into its invocation's
// model_calls right before after_model_call (else right after the last before_model_call, else at
// the end). Otherwise, with several candidates or a shared one, gap
// compaction_model_call_match_ambiguous (detail "candidate_count=<n>") is added. Finally every
// compaction_model_call_reference_unavailable gap is dropped unless its invocation still has an
// unlinked compaction.
//
// The error is non-nil when a canonical reference would be invalid (the matched call has an empty
// model_call_id and no model_ref/response_id pair): the reference fails then too, and [JoinCalls]
// records compaction_model_call_join_failed. Safe for concurrent use.
func AssociateCompactionCalls(bundle agentobs.AgentObservationBundle, calls []capture.ModelCallRecord) (agentobs.AgentObservationBundle, error) {
	result := bundle.Clone()
	if bundle.Source != Source {
		return result, nil
	}

	invocations := make(map[string]*agentobs.AgentInvocation)
	var compactions []*agentobs.ContextCompactionObservation
	for _, r := range result.Records {
		switch v := r.(type) {
		case *agentobs.AgentInvocation:
			if v != nil {
				invocations[v.InvocationID] = v // the last one wins, as in a dict comprehension
			}
		case *agentobs.ContextCompactionObservation:
			if v != nil {
				compactions = append(compactions, v)
			}
		}
	}

	// owned: list positions of calls some invocation reference matches (SPEC §9 #16: positions,
	// while the boundaries below compare call_index values).
	owned := make(map[int]bool)
	for _, inv := range invocations {
		for _, ref := range inv.ModelCalls {
			for i := range calls {
				if refMatchesCall(ref, &calls[i]) {
					owned[i] = true
				}
			}
		}
	}

	candidates := make([][]int, len(compactions))
	counts := make(map[int]int)
	for k, c := range compactions {
		candidates[k] = compactionCandidates(c, calls, owned)
		for _, i := range candidates[k] {
			counts[i]++
		}
	}

	for k, c := range compactions {
		cands := candidates[k]
		if len(cands) > 1 || (len(cands) == 1 && counts[cands[0]] > 1) {
			result.Gaps = append(result.Gaps, newGap(GapCompactionMatchAmbiguous, ptr(c.InvocationID),
				ptr("candidate_count="+strconv.Itoa(len(cands)))))
		}
		inv, present := invocations[c.InvocationID]
		if len(cands) != 1 || counts[cands[0]] != 1 || !present {
			continue
		}
		call := &calls[cands[0]]
		ref := agentobs.ModelCallRef{ModelCallID: clonePtr(call.ModelCallID), ResponseID: clonePtr(call.ResponseID)}
		if call.ModelRef != nil {
			ref.ModelRef = &agentobs.ModelServerRef{Type: call.ModelRef.Type, Name: call.ModelRef.Name}
		}
		if err := ref.Validate(); err != nil {
			return agentobs.AgentObservationBundle{}, fmt.Errorf("claudecode: compaction call at call_index %d: %w", call.CallIndex, err)
		}
		c.ModelCalls = []agentobs.ModelCallRef{ref}

		at := len(inv.ModelCalls)
		for i, existing := range inv.ModelCalls {
			if c.AfterModelCall != nil && refEqual(existing, *c.AfterModelCall) {
				at = i
				break
			}
			if c.BeforeModelCall != nil && refEqual(existing, *c.BeforeModelCall) {
				at = i + 1
			}
		}
		inv.ModelCalls = slices.Insert(inv.ModelCalls, at, ref.Clone())
	}

	unresolved := make(map[string]bool)
	for _, c := range compactions {
		if len(c.ModelCalls) == 0 {
			unresolved[c.InvocationID] = true
		}
	}
	kept := result.Gaps[:0]
	for _, g := range result.Gaps {
		if g.Code == GapCompactionReferenceUnavailable && (g.InvocationID == nil || !unresolved[*g.InvocationID]) {
			continue
		}
		kept = append(kept, g)
	}
	result.Gaps = kept
	return result, nil
}

// compactionCandidates returns the list positions of the calls that may have written c's
// summary (see AssociateCompactionCalls).
func compactionCandidates(c *agentobs.ContextCompactionObservation, calls []capture.ModelCallRecord, owned map[int]bool) []int {
	if (c.Outcome != agentobs.CompactionOutcomeCompleted) || len(c.ModelCalls) > 0 || c.Summary == nil {
		return nil
	}
	before, beforeOK := resolveCallIndex(c.BeforeModelCall, calls)
	after, afterOK := resolveCallIndex(c.AfterModelCall, calls)
	var modelRefs []agentobs.ModelServerRef
	for _, r := range []*agentobs.ModelCallRef{c.BeforeModelCall, c.AfterModelCall} {
		if r != nil && r.ModelRef != nil {
			modelRefs = append(modelRefs, *r.ModelRef)
		}
	}

	var out []int
	for i := range calls {
		call := &calls[i]
		if owned[i] || call.Dialect == nil || *call.Dialect != "messages" ||
			call.StatusCode == nil || *call.StatusCode < 200 || *call.StatusCode >= 300 || call.ErrorCategory != nil {
			continue
		}
		if call.ModelCallID == nil && (call.ModelRef == nil || call.ResponseID == nil) {
			continue
		}
		if len(modelRefs) > 0 && !modelRefIn(call.ModelRef, modelRefs) {
			continue
		}
		if !isCompactionRequest(call.Request) {
			continue
		}
		text, ok := messagesText(call.Response)
		if !ok || !matchesCompactionSummary(*c.Summary, text) {
			continue
		}
		if c.BeforeModelCall != nil && (!beforeOK || call.CallIndex <= before) {
			continue
		}
		if c.AfterModelCall != nil && (!afterOK || call.CallIndex >= after) {
			continue
		}
		out = append(out, i)
	}
	return out
}

// refMatchesCall is the resolver's identity test: model_call_id equality when the reference has a
// non-empty one, else equal model_ref (both may be null) and equal response_id.
func refMatchesCall(ref agentobs.ModelCallRef, call *capture.ModelCallRecord) bool {
	if ref.ModelCallID != nil && *ref.ModelCallID != "" {
		return call.ModelCallID != nil && *call.ModelCallID == *ref.ModelCallID
	}
	return modelRefEqual(ref.ModelRef, call.ModelRef) && ptrEqual(ref.ResponseID, call.ResponseID)
}

// resolveCallIndex returns the call_index of the one call ref matches; false when ref is nil or
// matches no call or several.
func resolveCallIndex(ref *agentobs.ModelCallRef, calls []capture.ModelCallRecord) (int, bool) {
	if ref == nil {
		return 0, false
	}
	index, n := 0, 0
	for i := range calls {
		if refMatchesCall(*ref, &calls[i]) {
			if n == 0 {
				index = calls[i].CallIndex
			}
			n++
		}
	}
	return index, n == 1
}

func modelRefEqual(a *agentobs.ModelServerRef, b *capture.ModelRef) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Type == b.Type && a.Name == b.Name
}

func modelRefIn(m *capture.ModelRef, refs []agentobs.ModelServerRef) bool {
	return slices.ContainsFunc(refs, func(r agentobs.ModelServerRef) bool { return modelRefEqual(&r, m) })
}

// ptrEqual reports whether a and b are both nil or point to equal values.
func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// refEqual is ModelCallRef equality (all three fields).
func refEqual(a, b agentobs.ModelCallRef) bool {
	return ptrEqual(a.ModelCallID, b.ModelCallID) && ptrEqual(a.ResponseID, b.ResponseID) && ptrEqual(a.ModelRef, b.ModelRef)
}

// isCompactionRequest reports whether the request's last message is a user message whose text
// (text(content), SPEC §6.4 Helpers) contains a summarization prompt marker.
func isCompactionRequest(request []byte) bool {
	if request == nil {
		return false
	}
	v, err := python.Loads(request)
	if err != nil {
		return false
	}
	messages, ok := v.Get("messages")
	if !ok || messages.Kind() != ojson.KindArray || messages.Len() == 0 {
		return false
	}
	last := messages.Elems()[messages.Len()-1]
	if last.Kind() != ojson.KindObject {
		return false
	}
	if role, ok := last.Get("role"); !ok || !isString(role, "user") {
		return false
	}
	text := textOf(last.Get("content"))
	return slices.ContainsFunc(compactionPromptMarkers, func(m string) bool { return strings.Contains(text, m) })
}

func isString(v ojson.Value, want string) bool {
	s, ok := v.AsString()
	return ok && s == want
}

// messagesText concatenates the string texts of the response's "text" content blocks; false when
// the response has no content list or the concatenation is empty.
func messagesText(response []byte) (string, bool) {
	if response == nil {
		return "", false
	}
	v, err := python.Loads(response)
	if err != nil {
		return "", false
	}
	content, ok := v.Get("content")
	if !ok || content.Kind() != ojson.KindArray {
		return "", false
	}
	var b strings.Builder
	for _, block := range content.Elems() {
		if !isTyped(block, "text") {
			continue
		}
		if t, ok := block.Get("text"); ok {
			if s, ok := t.AsString(); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String(), b.Len() > 0
}

// normalizeCompactionOutput is Claude Code's formatting of the model's summary (SPEC §6.6).
func normalizeCompactionOutput(text string) string {
	if loc := analysisBlock.FindStringIndex(text); loc != nil {
		text = text[:loc[0]] + text[loc[1]:]
	}
	if m := summaryBlock.FindStringSubmatchIndex(text); m != nil {
		text = text[:m[0]] + "Summary:\n" + python.Strip(text[m[2]:m[3]]) + text[m[1]:]
	}
	return python.Strip(blankRuns.ReplaceAllString(text, "\n\n"))
}

// matchesCompactionSummary reports whether summary is the prefix, the normalized model output and
// nothing but known suffixes.
func matchesCompactionSummary(summary, modelOutput string) bool {
	expected := compactionSummaryPrefix + normalizeCompactionOutput(modelOutput)
	rest, ok := strings.CutPrefix(summary, expected)
	return ok && compactionSuffix.MatchString(rest)
}
