package bench

import (
	"errors"
	"fmt"

	"github.com/gymtrace/gymtrace/capture"
)

// verifyCaptures reads the rollout files bench-0 … bench-(n-1) of captureDir tolerantly (SPEC §2.5)
// and compares their records with calls, the number of calls whose answer was read to its end.
func verifyCaptures(captureDir string, n, calls int) Verification {
	v := Verification{Calls: calls}
	store, err := capture.NewStore(captureDir)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	var errs []error
	for i := range n {
		id := fmt.Sprintf("bench-%d", i)
		recs, invalid, err := store.ReadAvailableModelCallRecords(id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v.Records += len(recs)
		v.Invalid += invalid
		for j := range recs {
			if recs[j].ErrorCategory != nil {
				v.WithError++
			}
			if recs[j].Response == nil {
				v.WithoutResponse++
			}
		}
		incomplete, err := store.IsIncomplete(id)
		if err != nil {
			errs = append(errs, err)
		} else if incomplete {
			v.Incomplete++
		}
	}
	if err := errors.Join(errs...); err != nil {
		v.Err = err.Error()
	}
	return v
}
