package capture

import (
	"sync/atomic"
	"time"
)

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
	// WaitedFlushes are the flushes appends waited on: the journal's batch fdatasyncs in journal
	// mode, the rollout files' group-commit fsyncs in per-record mode (background and directory
	// syncs are not among them).
	WaitedFlushes int64 `json:"waited_flushes"`
	// WaitedFlushP50 and WaitedFlushP99 are the median and 99th percentile duration of those
	// flushes (the flush call alone), to within 5 µs up to 20 ms: what one fsync costs the calls
	// at their own pace, which on a virtual machine whose CPUs idle between calls can be well above
	// a back-to-back probe's. 0 without WaitedFlushes.
	WaitedFlushP50 time.Duration `json:"waited_flush_p50_ns"`
	WaitedFlushP99 time.Duration `json:"waited_flush_p99_ns"`
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
	waited                                   flushHistogram
}

// SyncStats returns the store's counts so far. Safe for concurrent use.
func (s *Store) SyncStats() SyncStats {
	c := &s.counts
	return SyncStats{Lines: c.lines.Load(), FileSyncs: c.fileSyncs.Load(), JournalSyncs: c.journalSyncs.Load(), DirSyncs: c.dirSyncs.Load(),
		WaitedFlushes: c.waited.n.Load(), WaitedFlushP50: c.waited.quantile(0.5), WaitedFlushP99: c.waited.quantile(0.99)}
}
