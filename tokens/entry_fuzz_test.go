package tokens

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

// FuzzParseEntry: the TokenEntry line reader never panics; a line it accepts writes a canonical
// line, and that line (when its floats are finite, T7) reads back to the same bytes.
func FuzzParseEntry(f *testing.F) {
	for _, c := range testvectors.Load(f, "token_capture.json") {
		var want struct {
			Line string `json:"canonical_line"`
		}
		if json.Unmarshal(c.Expected, &want) == nil && want.Line != "" {
			f.Add([]byte(want.Line))
		}
	}
	f.Add([]byte(`{"rollout_id":"r","model_call_id":"c","prompt_token_ids":["7",8.0,true],"generation_token_ids":[" 1_0 "],"generation_log_probs":["nan"],"output_items":[{"b":1,"a":[{"d":1e2,"c":null}]}],"token_item_index":"0","x":{"z":1,"y":2}}`))
	f.Add([]byte(`{"rollout_id":"r","model_call_id":"c","prompt_token_ids":[1,2],"generation_token_ids":[3],"generation_log_probs":[-0.5],"prompt_token_ids":[9]}`))
	f.Add([]byte(`{"rollout_id":"r","model_call_id":"c","prompt_token_ids":[1.0,-0],"generation_token_ids":[9223372036854775808],"generation_log_probs":[1e400],"token_item_index":0}`))
	f.Add([]byte(`{"schema_version":2}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if fast, ok := parseEntryFast(line); ok { // the fast reader agrees with the general one
			general, err := parseEntryGeneral(line)
			if err != nil {
				t.Fatalf("fast path accepted %q, general path: %v", line, err)
			}
			a, errA := fast.CanonicalJSON()
			b, errB := general.CanonicalJSON()
			if errA != nil || errB != nil || string(a) != string(b) {
				t.Fatalf("fast %s (%v) != general %s (%v)", a, errA, b, errB)
			}
		}
		e, err := ParseEntry(line)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error text")
			}
			return
		}
		canonical, err := e.CanonicalJSON()
		if err != nil {
			t.Fatalf("accepted %q but cannot write it: %v", line, err)
		}
		again, err := ParseEntry(canonical)
		finite := !math.IsNaN(e.CreatedAt) && !math.IsInf(e.CreatedAt, 0)
		for _, x := range e.GenerationLogProbs {
			finite = finite && !math.IsNaN(x) && !math.IsInf(x, 0)
		}
		if !finite {
			return // written as null, which no reader accepts (TE-12, ST-19): the store refuses to write it
		}
		if err != nil {
			t.Fatalf("canonical %s does not read back: %v", canonical, err)
		}
		twice, err := again.CanonicalJSON()
		if err != nil || string(twice) != string(canonical) {
			t.Fatalf("canonical %s wrote %s (%v)", canonical, twice, err)
		}
	})
}
