// Package claudecode turns the transcripts Claude Code writes into its CLAUDE_CONFIG_DIR into the
// agent observation bundle NeMo Gym's Claude Code agent produces (SPEC.md §6.3, §6.4, §6.7), and
// joins such a bundle with the captured model calls of its rollout, including the link from a
// context compaction to the hidden call that summarized it (SPEC §5.4, §6.6).
//
// # What it reads
//
// A Claude Code run keeps one JSONL transcript per session under
// CLAUDE_CONFIG_DIR/projects/<project>/<session id>.jsonl and one per subagent under
// .../<session id>/subagents/<agent id>.jsonl. Each line is one JSON object ("event") with a
// sessionId, a type (user, assistant, system), a timestamp, a uuid and a message whose content is
// a string or a list of blocks (text, thinking, tool_use, tool_result, image). Subagent events
// carry agentId; a tool_result event that ended a subagent carries toolUseResult.agentId; a
// context compaction leaves a system event with subtype compact_boundary and compactMetadata and
// a user event with isCompactSummary true holding the summary. Nothing else in the directory
// (skills/, settings) is read.
//
// The reader never leaves the directory and never blocks (SPEC §0 D16): below it, nothing is
// opened through a symbolic link (each directory and transcript is opened relative to its parent
// with O_NOFOLLOW), a transcript must be a regular file, and it is read only up to
// Options.MaxTranscriptBytes. An entry that breaks a rule refuses the run with a [*TranscriptError].
//
// # What it produces
//
// [Extract] follows SPEC §6.4 step by step: invocations per session or subagent, tool calls timed
// from the transcript, compactions, and a gap for everything missing or ambiguous — never
// transcript content (a line that is not JSON is reported as "<file name>:<line number>").
// [Observe] adds the run-level rules of SPEC §6.3, and [Run.Apply] derives the root invocation's
// status, duration and compaction attempts from the CLI's stream-json output.
//
// [AssociateCompactionCalls] is the compaction resolver of SPEC §6.6; [JoinCalls] runs it and then
// the generic join (agentobs.Join) as SPEC §5.4 does for bundles whose source is "claude_code".
//
// # Python details reproduced
//
// The reference is Python; where its built-ins shape the output, this package reproduces them:
// lines are split at universal newlines after UTF-8 decoding with replacement, line numbers count
// blank lines, whitespace-only lines use str.strip(), JSON is read with json.loads rules
// (internal/python.Loads: duplicate keys keep the first position and the last value),
// tool_use arguments and non-text content are written with json.dumps(ensure_ascii=False,
// sort_keys=True), str() of non-string texts uses Python's repr, and timestamps are parsed with
// CPython 3.13's datetime.fromisoformat after replacing every "Z" with "+00:00" (naive times in
// Options.Location, the machine's local zone by default).
//
// # Deterministic order (SPEC §9 #14)
//
// Where the reference iterates Python sets, so that its order changes from process to process,
// this package fixes one:
//
//   - the gaps subagent_parent_unavailable and then invocation_outcome_unavailable are emitted in
//     record order: invocations sorted by first appearance (the global ordinal of their first kept
//     event; attempt-only invocations after all events, linked subagents without a transcript at
//     the ordinal of the event that linked them), ties by invocation id;
//   - the compaction attempts of sessions still compacting when the CLI stream ends
//     ([Run.Apply]) follow the order in which those sessions started compacting.
//
// Everything else already has the reference's order: files in path-component order, events in
// file order, invocations processed in first-seen order, subagent_transcript_missing in link
// order, tool observations by (first appearance of the invocation, tool call id), records as
// invocations, tool calls, compactions.
//
// # Where it follows the SPEC rather than the reference's accidents
//
// The reference raises (and Gym then records only observation_parse_failed) on a few inputs the
// SPEC describes as data; this package applies the SPEC rule to each and keeps the rest of the
// run: a message role that is a JSON list or object is another role (ignored); a
// toolUseResult.status that is a list or object is not a status (completed); a numeric timestamp
// too large for a float is not finite (null); a line nested deeper than 1024 levels is a
// malformed line (Python's recursion limit is about that deep); an integer of more than 4300
// digits is an integer. JSON NaN/Infinity literals and floats beyond the float64 range read as
// null (Claude Code, a JavaScript program, never writes them); lone surrogate escapes read as
// U+FFFD; integers beyond int64 in compactMetadata token counts are skipped like other
// non-integers.
//
// # Concurrency
//
// The functions keep no state: safe for concurrent use. Bundles are plain values (see agentobs).
package claudecode
