// Package tokens implements NeMo Gym's training token-id capture (TOKENS.md, in the repository as
// docs/TOKENS.md): the TokenEntry line, the file store of `<rollout_id>.tokens.*` files with its
// state index, intents and incomplete marks, freeze and retire, and the collector's finalization
// (builders, projection onto `response.output`, `mask_sample`).
//
// The store side, byte-compatible with Gym's own processes sharing the directory:
//
//   - [TokenEntry] lines: [ParseEntry] / [EntryFromValue] read them with pydantic's lax rules and
//     the reference's errors ([*ValidationError], whose text is pydantic's); [TokenEntry.CanonicalJSON]
//     writes orjson's sorted-key bytes (package ojson's string and float text) and [EntryDigest]
//     their sha256 (TOKENS.md §2.2).
//   - [Store]: the reference's TokenCaptureStore (TOKENS.md §2): [Store.BeginCall] (intents),
//     [Store.Append] (idempotent per model_call_id, fsynced), [Store.MarkIncomplete],
//     [Store.IsIncomplete], [Store.ReadEntries], [Store.Freeze] and [Store.Drop] (the [Source] the
//     finalization uses), [Store.Delete] (the pre-dispatch clear) and [Store.SweepRetired]. Every
//     operation holds BSD flock on `<id>.tokens.lock`: safe for concurrent use by goroutines and by
//     processes, Gym's Python ones included. Rollout ids follow the reference's file-name rule
//     ([ValidateRolloutID]).
//   - The sink side the proxy calls for a token-captured call (TOKENS.md §3.1–3.3): a [Call] holds
//     the rollout and model call ids and the [Sink]; [Call.RegisterIntent] before forwarding,
//     [Call.CaptureTokens] with the complete response body after it ([ExtractTokenFields],
//     [ResponseToOutputItems], [StripTokenFields], [EntryFromResponse]), which writes the entry or
//     marks the rollout incomplete and says why ([Outcome], [Cause]); it never fails the call.
//
// Errors the reference raises as Python exceptions are [*Error] values carrying the exception's
// type and message (a failed build quotes them as "<Type>: <message>"); lifecycle refusals match
// [ErrFrozen] and [ErrRetired]. Every file of a rollout is opened only as a regular file with one
// link, never through a symbolic link, by readers and writers alike (else an error naming the path
// and matching [ErrNotRegularFile]); [Store.Inspect] computes the index recovery a freeze applies
// (TOKENS.md §2.7) without applying it, so a read-only view and the finalization agree.
//
// Where gymtrace differs from the reference (docs/TOKENS.md §0 T7): token ids are int64 (an id in
// [2^63, 2^64) is refused), and the store refuses to write an entry the readers would refuse (a
// non-finite log prob, a failed model check), so the caller marks the rollout incomplete instead
// of poisoning it.
package tokens
