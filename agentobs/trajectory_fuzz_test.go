package agentobs

import (
	"encoding/json"
	"testing"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// FuzzAttachTrajectory checks that no row and result make the projection, the attach step or the
// export view panic, and that a successful projection is a valid trajectory whose re-validation
// gives the same dump (SPEC §5.6: re-validating a dump gives the same dump).
func FuzzAttachTrajectory(f *testing.F) {
	for _, c := range testvectors.Load(f, "trajectory.json") {
		var in struct{ Row, Result json.RawMessage }
		if json.Unmarshal(c.Input, &in) == nil && in.Row != nil {
			f.Add(string(in.Row), string(in.Result))
		}
	}
	f.Fuzz(func(t *testing.T, rowText, resultText string) {
		row, err1 := ojson.Parse([]byte(rowText))
		result, err2 := ojson.Parse([]byte(resultText))
		if err1 != nil || err2 != nil || result.Kind() != ojson.KindObject {
			return
		}
		if rec, err := ProjectTrajectory(row, result); err == nil {
			again, err := validateTrajectory(rec)
			if err != nil {
				t.Fatalf("projected trajectory does not re-validate: %v\n%s", err, rec)
			}
			if again.String() != rec.String() {
				t.Fatalf("re-validation changed the dump:\n%s\n%s", rec, again)
			}
		}
		_ = AttachTrajectory(row, &result)
		_ = RolloutForExport(result)
	})
}
