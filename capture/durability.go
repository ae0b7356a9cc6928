package capture

import (
	"fmt"
	"time"
)

// Durability is how a [Store] makes a whole record line durable before [Store.Append] returns
// (SPEC §0 "Durability contract", D17).
type Durability uint8

const (
	// DurabilityPerRecord (the default, "per-record"): each group commit of one rollout file is
	// written and fsynced in that file under its flock (SPEC §2.3); concurrent appends to different
	// files never share an fsync.
	DurabilityPerRecord Durability = iota
	// DurabilityJournal ("journal"): each line is first appended to the store's own journal, one
	// fdatasync per batch of concurrent appends to any rollout files, then to its rollout file under
	// the file's flock without an fsync of its own; the rollout files are fsynced in the background
	// and the journal is dropped only after the files it covers are durable (SPEC §0 D17). A line
	// given in pieces ([Store.AppendStream]) is not journaled: it is fsynced in its file as in
	// per-record mode.
	DurabilityJournal
)

var durabilityNames = [...]string{DurabilityPerRecord: "per-record", DurabilityJournal: "journal"}

// String returns "per-record" or "journal", the names [ParseDurability] reads.
func (d Durability) String() string {
	if int(d) < len(durabilityNames) {
		return durabilityNames[d]
	}
	return fmt.Sprintf("Durability(%d)", uint8(d))
}

// ParseDurability reads "per-record" or "journal" (the --durability flag and the gymcapture
// exporter's durability key); anything else is an error naming the value and both names.
func ParseDurability(s string) (Durability, error) {
	for d, name := range durabilityNames {
		if s == name {
			return Durability(d), nil
		}
	}
	return 0, fmt.Errorf("durability %q: want %q or %q", s, durabilityNames[DurabilityPerRecord], durabilityNames[DurabilityJournal])
}

// DefaultJournalSyncInterval is how often a journaled store fsyncs the rollout files it wrote and
// drops the part of its journal they cover ([WithJournalSyncInterval]).
const DefaultJournalSyncInterval = time.Second

// WithDurability sets the store's [Durability] (default [DurabilityPerRecord]). With
// [DurabilityJournal], [NewStore] opens the store's journal (creating the hidden directory
// [JournalDirName] in the store directory) and the store must be closed ([Store.Close]); a value
// that is neither makes NewStore fail.
func WithDurability(d Durability) StoreOption {
	return storeOptionFunc(func(c *storeConfig) { c.durability = d })
}

// WithJournalSyncInterval sets how often a journaled store ([DurabilityJournal]) fsyncs, in the
// background, the rollout files it appended to since the last time, and then removes the journal
// segment that covered them (default [DefaultJournalSyncInterval]; it bounds how much a recovery
// replays and how long a record may live only in the journal). It must be positive, else NewStore
// fails. It has no effect in per-record mode.
func WithJournalSyncInterval(d time.Duration) StoreOption {
	return storeOptionFunc(func(c *storeConfig) { c.journalInterval = d })
}
