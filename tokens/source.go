package tokens

// Snapshot is the frozen state of one rollout's token capture (TOKENS.md §3.8): its entries in
// file order, whether the capture is known to have a hole, and the identity (SnapshotID, Version)
// that a later retire must match (TOKENS.md §2.6).
type Snapshot struct {
	RolloutID  string
	Entries    []TokenEntry
	Incomplete bool
	SnapshotID string
	Version    int64
}

// Source freezes and retires rollouts' token captures (TOKENS.md §3.8: the reference's
// TokenSource). Freeze is idempotent; Drop retires the capture only when the rollout is frozen at exactly
// (snapshotID, version) and reports whether it did.
type Source interface {
	Freeze(rolloutID string) (Snapshot, error)
	Drop(rolloutID, snapshotID string, version int64) (bool, error)
}
