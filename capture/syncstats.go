package capture

import "sync/atomic"

// SyncStats counts what a [Store] made durable and the flushes it took, since [NewStore]: the cost
// of its [Durability] mode (fsyncs per line = (FileSyncs + JournalSyncs + DirSyncs) / Lines).
type SyncStats struct {
	// Lines are the record lines appended to rollout files (duplicates found in the file are not).
	Lines int64 `json:"lines"`
	// FileSyncs are the fsyncs of rollout files: one per group commit in per-record mode, and in
	// journal mode one per rollout file written during a sync interval (background) plus one per
	// commit of a line given in pieces.
	FileSyncs int64 `json:"file_fsyncs"`
	// JournalSyncs are the fdatasyncs of the journal, one per batch of concurrent appends.
	JournalSyncs int64 `json:"journal_fdatasyncs"`
	// DirSyncs are the fsyncs of directories: the store directory after creating a file (or, in
	// journal mode, once per sync interval in which files were created) and the journal's own.
	DirSyncs int64 `json:"dir_fsyncs"`
}

// PerLine returns all flushes divided by Lines, 0 when no line was appended.
func (s SyncStats) PerLine() float64 {
	if s.Lines == 0 {
		return 0
	}
	return float64(s.FileSyncs+s.JournalSyncs+s.DirSyncs) / float64(s.Lines)
}

// syncCounters are a store's live [SyncStats].
type syncCounters struct {
	lines, fileSyncs, journalSyncs, dirSyncs atomic.Int64
}

// SyncStats returns the store's counts so far. Safe for concurrent use.
func (s *Store) SyncStats() SyncStats {
	c := &s.counts
	return SyncStats{Lines: c.lines.Load(), FileSyncs: c.fileSyncs.Load(), JournalSyncs: c.journalSyncs.Load(), DirSyncs: c.dirSyncs.Load()}
}
