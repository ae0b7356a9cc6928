package gymcaptureexporter

import (
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
)

// checkRolloutID applies the one id rule of SPEC §0 D12 ([rollout.ValidateID]) that every entry
// point naming a rollout holds: an id the proxy would answer with 400 is rejected here too, and
// names no file (no record, no marker). An id that is not even a file name (SPEC §2.2) keeps the
// store's error, Gym's "Invalid rollout id: ..." text.
func checkRolloutID(rid string) error {
	if err := capture.ValidateRolloutID(rid); err != nil {
		return err
	}
	return rollout.ValidateID(rid)
}
