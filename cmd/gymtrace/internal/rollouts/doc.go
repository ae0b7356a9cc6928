// Package rollouts reads and edits rollout JSONL files as NeMo Gym's rollout collection writes them:
// one JSON object per line, UTF-8, newline-terminated, lines of any length. [Attach] adds each
// rollout's captured model calls and joins its agent observations (`gymtrace attach`), [Clear] is
// the pre-dispatch clear (`gymtrace clear`) and [ReadIDs] lists the rollout ids of a file (`gymtrace
// report`). Functions are safe for concurrent use on distinct readers and writers; they start no
// goroutines.
package rollouts
