package bench

import (
	"encoding/json"
	"os"

	"github.com/gymtrace/gymtrace/capture"
)

// setSyncs reads the sync counts a capture proxy that wrote to captureDir reported when it exited
// ([SyncStatsPath]) and sets the row's Syncs and FsyncsPerRecord; a proxy that reported nothing
// (the plain target, a CommandFunc without the flag) leaves them absent. The file is removed.
func (t *TargetResult) setSyncs(captureDir string) {
	if captureDir == "" {
		return
	}
	path := SyncStatsPath(captureDir)
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	_ = os.Remove(path)
	var st capture.SyncStats
	if json.Unmarshal(b, &st) != nil {
		return
	}
	per := st.PerLine()
	t.Syncs, t.FsyncsPerRecord = &st, &per
}
