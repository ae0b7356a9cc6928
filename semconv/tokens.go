package semconv

import "go.opentelemetry.io/otel/attribute"

// Training token capture (docs/TOKENS.md §0 T8): span attributes and counters of the proxy's token
// capture. They carry counts only, never the token arrays. Project keys, not semantic conventions.
const (
	// GymtraceTokensPromptCountKey is the number of prompt token ids the call's token entry holds
	// (int; set only when an entry was written).
	GymtraceTokensPromptCountKey = attribute.Key("gymtrace.tokens.prompt_count")
	// GymtraceTokensGenerationCountKey is the number of generated token ids (and log probs) the
	// call's token entry holds (int; set only when an entry was written).
	GymtraceTokensGenerationCountKey = attribute.Key("gymtrace.tokens.generation_count")
	// GymtraceTokensEntryWrittenKey reports whether the call's token entry was written (bool; set on
	// every token-captured call). When false, [GymtraceTokensIncompleteCauseKey] says why.
	GymtraceTokensEntryWrittenKey = attribute.Key("gymtrace.tokens.entry_written")
	// GymtraceTokensIncompleteCauseKey is why a token-captured call left its rollout incomplete
	// (string, one of the TokensCause* values; set only when no entry was written).
	GymtraceTokensIncompleteCauseKey = attribute.Key("gymtrace.tokens.incomplete_cause")
)

// gymtrace.tokens.incomplete_cause values (docs/TOKENS.md §3.3, plus the proxy's own causes of T2,
// T3 and T5). The first five are package tokens' Cause values.
const (
	TokensCauseNoTokenIDs       = "no_token_ids"      // the response carries no token ids
	TokensCauseNotAnObject      = "not_an_object"     // the response is not a JSON object
	TokensCauseBuild            = "build"             // extraction or entry validation failed
	TokensCauseWrite            = "write"             // the token store refused or failed the entry
	TokensCauseIdentityMismatch = "identity_mismatch" // an entry of another call was committed
	TokensCauseUnobservedPath   = "unobserved_path"   // a call under the token prefix to another path (TOKENS.md §1.3 step 2)
	TokensCauseStream           = "stream"            // a stream whose ids could not be completed (T3)
	TokensCauseBound            = "capture_bound"     // the held answer passed a capture bound (T2, SPEC §0 D15)
	TokensCauseUpstream         = "upstream_error"    // the upstream answered an error status or the exchange broke
	TokensCauseNoSource         = "no_token_source"   // --token-source none: nothing can return ids (TOKENS.md §7)
	TokensCauseAdapter          = "adapter"           // the upstream's token fields break the adapter's rules (TOKENS.md §1.5)
)

// Training token capture counters (T8), on the proxy's meter ([GymtraceCaptureCallsName]'s).
const (
	// GymtraceTokensEntriesName counts token entries written (one per token-captured call that
	// produced an entry).
	GymtraceTokensEntriesName = "gymtrace.tokens.entries"
	// GymtraceTokensEntriesUnit is the unit of gymtrace.tokens.entries.
	GymtraceTokensEntriesUnit = "{entry}"
	// GymtraceTokensEntriesDescription is the description of gymtrace.tokens.entries.
	GymtraceTokensEntriesDescription = "Training token entries written by the proxy."

	// GymtraceTokensIncompleteName counts the incomplete marks the proxy wrote to token captures,
	// by [GymtraceTokensIncompleteCauseKey] (each mark makes its rollout masked at finalization).
	GymtraceTokensIncompleteName = "gymtrace.tokens.incomplete_marks"
	// GymtraceTokensIncompleteUnit is the unit of gymtrace.tokens.incomplete_marks.
	GymtraceTokensIncompleteUnit = "{mark}"
	// GymtraceTokensIncompleteDescription is the description of gymtrace.tokens.incomplete_marks.
	GymtraceTokensIncompleteDescription = "Rollouts marked incomplete by the proxy's token capture, by cause."
)
