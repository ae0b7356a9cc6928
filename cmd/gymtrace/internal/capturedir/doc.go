// Package capturedir lists what a capture directory holds: the rollout ids that have a capture file
// (<id>.capture.jsonl) or an incomplete marker (<id>.capture.incomplete) in it (SPEC.md §2.1).
//
// It only reads directory entries: it never opens, creates or changes a file. `gymtrace report` and
// `gymtrace rederive` use it to find the rollouts of a run; reading the files themselves is the
// business of package capture. Functions are safe for concurrent use.
package capturedir
