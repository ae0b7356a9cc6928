// Package rolloutline edits one rollout JSONL line — a single JSON object, as rollout collection
// writes it — without re-encoding what it does not touch.
//
// Parse splits the object into its top-level members, keeping each key's and each value's original
// JSON text byte for byte. Set replaces one member's value in place, or appends a new member at the
// end; Bytes joins the members back compactly ({"k":v,...}). Every other member keeps its position
// and its exact text (number spelling, escapes, key order, nested whitespace), so a reader sees the
// same values it saw before. `gymtrace attach` uses it to add or replace ng_model_call_capture
// (SPEC.md §5) on lines written by NeMo Gym.
//
// A Line is a plain value: it is not safe for concurrent use, and copies of a Line share storage
// until one of them is modified with Set.
package rolloutline
