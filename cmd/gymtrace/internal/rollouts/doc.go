// Package rollouts adds captured model calls to finished rollouts and clears stale captures before a
// rollout is dispatched: the library behind `gymtrace attach` and `gymtrace clear` (and `gymtrace
// demo`).
//
// Its input and output are rollout JSONL files as NeMo Gym's rollout collection writes them: one JSON
// object per line, UTF-8, newline-terminated. A line may be many megabytes long; lines are read
// without a length limit.
//
// [Attach] is SPEC.md §5.5 step 2 applied to such a file: for every row that carries a rollout identity
// (SPEC §1.2: _ng_rollout_id, or _ng_task_index and _ng_rollout_index, plus an optional
// _ng_attempt_index) it builds the rollout's ng_model_call_capture attachment (SPEC §5.1–§5.3, from
// [capture.BuildAttachment]) and stores it in the row — replacing an existing one in place, else as
// the last key — while every other key keeps its position and its original JSON text byte for byte.
// Rows without an identity, and rows that cannot be read (not a JSON object, or a malformed id), are
// written unchanged, so the output always has one line per input line.
//
// [Clear] is SPEC §2.6's pre-dispatch clear over a file of rows about to be dispatched: it validates
// every row first and removes nothing when one row is bad.
//
// ng_agent_observations is not joined here: a row's observations are written as they are. Functions
// of this package are safe for concurrent use on distinct readers and writers; they start no
// goroutines.
package rollouts
