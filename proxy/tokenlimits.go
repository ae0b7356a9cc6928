package proxy

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/sdk/stream"
	"github.com/gymtrace/gymtrace/semconv"
	"github.com/gymtrace/gymtrace/tokens"
)

// The token entry's limits (docs/TOKENS.md §0 T7), which the adapter applies to the ids and log
// probs it reads from an upstream answer (readAnswer keeps what json.loads reads: integers of any
// size, non-finite floats) before it builds the payload: the same refusals, with the same errors,
// as package tokens makes when such an entry is built or appended, so the call marks its rollout
// incomplete with the rule it breaks.

// maxUint64 is 2^64-1, the largest integer orjson writes.
var maxUint64 = new(big.Int).SetUint64(math.MaxUint64)

// tokenIDList is stream.TokenIDList (the reference adapter's "`<name>` must be a list of integer
// token IDs.") with T7's rule for an integer id that int64 cannot hold: beyond both 64-bit ranges,
// the reference's own TypeError "Integer exceeds 64-bit range" (raised by the reference when it
// writes the line, [TE-14]); in [2^63, 2^64), which the reference writes [TE-13], gymtrace's
// refusal naming the field and the value. Both match tokens.ErrIntegerRange; the first element
// that is not an int64 decides.
func tokenIDList(v ojson.Value, name string) ([]int64, error) {
	ids, err := stream.TokenIDList(v, name)
	if err == nil {
		return ids, nil
	}
	for i, e := range v.Elems() {
		if _, ok := e.Int64(); ok {
			continue
		}
		if t, ok := e.NumberText(); ok && e.IsInteger() {
			if n, ok := new(big.Int).SetString(t, 10); ok {
				return nil, idRangeError(fmt.Sprintf("%s[%d]", name, i), n)
			}
		}
		break
	}
	return nil, err
}

// idRangeError is the refusal of the integer n at where (docs/TOKENS.md §0 T7), the message of
// package tokens' own check for an entry's ids.
func idRangeError(where string, n *big.Int) error {
	if n.Sign() < 0 || n.Cmp(maxUint64) > 0 {
		return &tokens.Error{Type: "TypeError", Msg: "Integer exceeds 64-bit range",
			Hint: fmt.Sprintf("%s is %s; docs/TOKENS.md §0 T7", where, n), Err: tokens.ErrIntegerRange}
	}
	return &tokens.Error{Type: "ValueError",
		Msg: fmt.Sprintf("%s is %s, outside the signed 64-bit range of token ids and indices in gymtrace (the reference accepts up to 2^64-1; docs/TOKENS.md §0 T7)", where, n),
		Err: tokens.ErrIntegerRange}
}

// finiteLogProbs refuses a NaN or infinite log prob: the reference stores it and writes it as null,
// after which no reader accepts the rollout's capture ([ST-19], docs/TOKENS.md §6 #8); gymtrace
// never writes one (T7). The message is the token store's for such an entry.
func finiteLogProbs(lps []float64) error {
	for i, f := range lps {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return &tokens.Error{Type: "ValueError",
				Msg: fmt.Sprintf("generation_log_probs[%d] is %s: gymtrace never writes a non-finite log prob, which the reference would write as null and could not read back (docs/TOKENS.md §0 T7)", i, python.ReprFloat(f)),
				Err: tokens.ErrNonFinite}
		}
	}
	return nil
}

// adapterCause is the incomplete cause of an adapter error: build for a value the entry cannot
// hold (T7: the failure package tokens reports when such an entry is built), adapter for every
// other rule of docs/TOKENS.md §1.5.
func adapterCause(err error) string {
	if errors.Is(err, tokens.ErrIntegerRange) || errors.Is(err, tokens.ErrNonFinite) {
		return semconv.TokensCauseBuild
	}
	return semconv.TokensCauseAdapter
}
