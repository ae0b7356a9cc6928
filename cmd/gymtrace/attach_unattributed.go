package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/report"
)

// noteUnattributed reports on stderr a non-empty _unattributed.observations.jsonl in store's
// directory (SPEC §0 D18: observation spans that named no rollout, in no rollout's observations)
// and returns its sentence, "" when the file is missing or empty. A file that cannot be read is
// reported and returned the same way: --strict must not pass over it.
func noteUnattributed(cmd *cobra.Command, store *capture.Store) string {
	path := filepath.Join(store.Dir(), capture.UnattributedObservationsFile)
	u, err := agentobs.ReadUnattributed(store)
	var msg string
	switch {
	case err != nil:
		msg = report.UnattributedUnreadableMessage(path, err)
	case u.Empty():
		return ""
	default:
		msg = report.UnattributedMessage(path, u)
	}
	cmdNotef(cmd, "%s", msg)
	return msg
}
