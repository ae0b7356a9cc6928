// Package rolloutline edits one rollout JSONL line — a single JSON object, as rollout collection
// writes it — without re-encoding what it does not touch: [Parse] keeps each top-level key's and
// value's JSON text byte for byte, [Line.Set] replaces one value in place or appends a new member,
// and [Line.Bytes] joins the members back compactly, so a reader sees the same values it saw before.
// `gymtrace attach` uses it to add ng_model_call_capture (SPEC.md §5) to lines written by NeMo Gym.
//
// A Line is a plain value: it is not safe for concurrent use, and copies of a Line share storage
// until one of them is modified with Set.
package rolloutline
