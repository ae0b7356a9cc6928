package rollouts

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/tokens"
)

// DefaultMaskFractionMinSamples is [TokenOptions].MinSamples' default, the reference's
// token_id_capture.mask_fraction_min_samples (TOKENS.md §3.9).
const DefaultMaskFractionMinSamples = 50

// TokenOptions configures the token finalization of [Attach] (docs/TOKENS.md §0 T6, §1.7 steps
// 5–7): for every participating row, after its attachment and ng_trajectory, the rollout's token
// capture is frozen, built, projected onto response.output, and mask_sample and _ng_token_capture
// are set ([tokens.FinalizeRolloutWith]). Attach never retires a capture: it lists the retirable
// builds in [TokenSummary].Retirable (Summary.Tokens), for [Retire] once the output is durable.
type TokenOptions struct {
	// Store is the token store (required).
	Store *tokens.Store
	// Builder is the builder's name; "" means [tokens.BuilderPrefixMerging], the reference's.
	Builder string
	// AllRows makes every row with a rollout id participate; otherwise only the rows whose
	// rollout has a token capture file ([tokens.Store.HasCapture]: entries, intents, marks or
	// state, a tombstone included) do (T6).
	AllRows bool
	// MaxMaskFraction, when not nil, aborts Attach with a [*MaskFractionError] as soon as at
	// least MinSamples rows were finalized and more than this fraction of them is masked (the
	// reference's token_id_capture.max_mask_fraction, TOKENS.md §1.7 step 5).
	MaxMaskFraction *float64
	// MinSamples is the reference's mask_fraction_min_samples; 0 or less means
	// DefaultMaskFractionMinSamples (50).
	MinSamples int
}

// MaskedRollout is a finalized row the trainer must not train on: mask_sample is true.
type MaskedRollout struct {
	Line      int    // 1-based input line
	RolloutID string // its rollout id
	Cause     string // why, [MaskCause]

	reasons []string // the reference's abort reasons (TOKENS.md §1.7 step 5)
}

// Retirable is a build whose capture may be retired once the output holding its row is durable
// ([tokens.CaptureBuildCanRetire]).
type Retirable struct {
	RolloutID string
	Built     ojson.Value
}

// TokenSummary counts what the token finalization of [Attach] did.
type TokenSummary struct {
	// Finalized counts the participating rows (Kept included): those the mask fraction is
	// computed over.
	Finalized int
	// Kept counts the rows left as they were because their rollout's capture was retired by an
	// earlier finalization (T6: re-running never masks a well-finalized rollout) or because they
	// already carry a finalization that masked them.
	Kept int
	// Masked lists the rows with mask_sample true, in input order.
	Masked []MaskedRollout
	// Retirable lists the builds to retire after the output is durable, one per rollout id, in
	// input order.
	Retirable []Retirable
	// Warnings are the finalization's warnings for the log (TOKENS.md §3.7's texts) about rows not
	// in Masked, in input order.
	Warnings []RowError

	retiring map[string]bool // the ids in Retirable
}

// MaskFractionError is the reference's abort (TOKENS.md §1.7 step 5): too many finalized rollouts
// are masked. Its text is the reference's RuntimeError message.
type MaskFractionError struct {
	Masked, Finalized int
	MaxFraction       float64
	// Reasons counts the masked rows' causes as the reference does: capture_incomplete,
	// unresolved_parent_calls and each error text, in first-seen order (an object of ints).
	Reasons ojson.Value
}

func (e *MaskFractionError) Error() string {
	return fmt.Sprintf("%d/%d finalized rollouts (%.1f%%) are masked, exceeding token_id_capture.max_mask_fraction=%s. Mask reasons: %s. Aborting instead of collecting mostly token-less data.",
		e.Masked, e.Finalized, 100*float64(e.Masked)/float64(e.Finalized), python.ReprFloat(e.MaxFraction), python.Repr(e.Reasons))
}

// finalizeKeys are the row keys the finalization reads and writes (TOKENS.md §3.7).
var finalizeKeys = append(append([]string(nil), identityKeys...), "response", tokens.MaskSampleKey, tokens.TokenCaptureKey)

// freezeWatch is the store as the finalization's Source, remembering the last Freeze error.
type freezeWatch struct {
	*tokens.Store
	err error
}

func (w *freezeWatch) Freeze(id string) (tokens.Snapshot, error) {
	snap, err := w.Store.Freeze(id)
	w.err = err
	return snap, err
}

// finalizeTokens runs the token finalization on row l (input line n, rollout id) and counts it in
// ts. The error is a store failure (not a capture problem: those become the row's build) or the
// mask-fraction abort.
func finalizeTokens(ts *TokenSummary, l *rolloutline.Line, n int, id string, opts *TokenOptions) error {
	if !opts.AllRows {
		has, err := opts.Store.HasCapture(id)
		if err != nil || !has {
			return err
		}
	}
	before := pick(l, finalizeKeys)
	for _, k := range finalizeKeys {
		if _, inLine := l.Get(k); inLine {
			if _, read := before.Get(k); !read { // never replace what could not be read
				return fmt.Errorf("token finalization: the row's %s cannot be read as JSON (too deep?)", k)
			}
		}
	}
	ts.Finalized++
	if capture, ok := before.Get(tokens.TokenCaptureKey); ok {
		if mask, _ := before.Get(tokens.MaskSampleKey); python.Truthy(mask) {
			// A finalization masked it already: its capture was kept and is not retired again.
			ts.Kept++
			ts.Masked = append(ts.Masked, maskedRollout(n, id, capture, nil))
			return ts.checkFraction(opts)
		}
	}
	row := before.Clone()
	src := &freezeWatch{Store: opts.Store}
	built, warning := tokens.FinalizeRolloutWith(&row, src, cmp.Or(opts.Builder, tokens.BuilderPrefixMerging))
	if errors.Is(src.err, tokens.ErrRetired) {
		// An earlier finalization built this rollout and retired its capture after writing its
		// line (T6): the row is kept as it is, never masked.
		ts.Kept++
		if !tokens.RolloutCarriesTokenIDs(before) {
			ts.Warnings = append(ts.Warnings, RowError{Line: n, Err: fmt.Errorf(
				"rollout %s: its token capture was retired by an earlier finalization, whose output holds its tokens; this row is left without them", id)})
		}
		return ts.checkFraction(opts)
	}
	mask, _ := row.Get(tokens.MaskSampleKey)
	if warning != "" && !python.Truthy(mask) { // a masked row is listed in Masked with its cause
		ts.Warnings = append(ts.Warnings, RowError{Line: n, Err: errors.New(warning)})
	}
	for _, m := range row.Members() {
		if was, had := before.Get(m.Key); !had || !was.Equal(m.Value) {
			if err := l.Set(m.Key, m.Value.AppendJSON(nil)); err != nil {
				return err
			}
		}
	}
	if python.Truthy(mask) {
		capture, _ := row.Get(tokens.TokenCaptureKey)
		unresolved, _ := built.Get("unresolved_retries")
		ts.Masked = append(ts.Masked, maskedRollout(n, id, capture, unresolved.Elems()))
	}
	if tokens.CaptureBuildCanRetire(built) && !ts.retiring[id] {
		if ts.retiring == nil {
			ts.retiring = make(map[string]bool)
		}
		ts.retiring[id] = true
		ts.Retirable = append(ts.Retirable, Retirable{RolloutID: id, Built: built})
	}
	return ts.checkFraction(opts)
}

// checkFraction is the reference's abort test after each finalized rollout (TOKENS.md §1.7 step 5).
func (ts *TokenSummary) checkFraction(opts *TokenOptions) error {
	minSamples := opts.MinSamples
	if minSamples <= 0 {
		minSamples = DefaultMaskFractionMinSamples
	}
	if opts.MaxMaskFraction == nil || ts.Finalized < minSamples ||
		float64(len(ts.Masked))/float64(ts.Finalized) <= *opts.MaxMaskFraction {
		return nil
	}
	return &MaskFractionError{Masked: len(ts.Masked), Finalized: ts.Finalized, MaxFraction: *opts.MaxMaskFraction, Reasons: ts.reasons()}
}

// maskedRollout describes masked row n from its _ng_token_capture.
func maskedRollout(n int, id string, capture ojson.Value, unresolved []ojson.Value) MaskedRollout {
	m := MaskedRollout{Line: n, RolloutID: id, Cause: MaskCause(capture, unresolved)}
	for _, k := range []string{"capture_incomplete", "unresolved_parent_calls"} {
		if v, _ := capture.Get(k); python.Truthy(v) {
			m.reasons = append(m.reasons, k)
		}
	}
	if e, ok := capture.Get("error"); ok {
		m.reasons = append(m.reasons, python.Str(e))
	}
	return m
}

// reasons counts the masked rows' reference reasons (TOKENS.md §1.7 step 5).
func (ts *TokenSummary) reasons() ojson.Value {
	counts := ojson.Object()
	for _, m := range ts.Masked {
		for _, r := range m.reasons {
			n, _ := counts.Get(r)
			c, _ := n.Int64()
			counts.Set(r, ojson.Int(c+1))
		}
	}
	return counts
}

// MaskCause says why a finalized row is masked, from its _ng_token_capture (the build's metrics and
// error, TOKENS.md §3.6–3.7) and the build's unresolved retries (which _ng_token_capture does not
// hold, TOKENS.md §6 #6; nil when unknown): the build's error, else the metrics that mask it, joined by "; ".
func MaskCause(capture ojson.Value, unresolved []ojson.Value) string {
	if e, ok := capture.Get("error"); ok {
		return python.Str(e)
	}
	var causes []string
	if v, _ := capture.Get("capture_incomplete"); python.Truthy(v) {
		causes = append(causes, "capture incomplete (a call's tokens were not recorded: an intent without an entry, or an incomplete mark)")
	}
	var shape []string
	for _, k := range []string{"roots", "chains"} {
		if v, ok := capture.Get(k); ok {
			if n, _ := v.Int64(); n != 1 {
				shape = append(shape, fmt.Sprintf("%d %s", n, k))
			}
		}
	}
	if len(shape) > 0 {
		causes = append(causes, strings.Join(shape, " and ")+" (want one of each: the calls do not chain into one prefix)")
	}
	if len(unresolved) > 0 {
		ids := make([]string, len(unresolved))
		for i, u := range unresolved {
			ids[i] = python.Str(u)
		}
		causes = append(causes, "unresolved retries "+strings.Join(ids, ", "))
	}
	if len(causes) == 0 {
		return "masked (no cause recorded)"
	}
	return strings.Join(causes, "; ")
}

// Retire retires the captures of rs in store ([tokens.RetireRollout]: each at its build's frozen
// snapshot identity), and returns how many it retired and the warnings of those it could not. Call
// it only once the output holding their rows is durable (fsynced, T6, TOKENS.md §1.7 step 7): a
// retired capture cannot be built again.
func Retire(store *tokens.Store, rs []Retirable) (retired int, warnings []string) {
	for _, r := range rs {
		ok, warning := tokens.RetireRollout(r.RolloutID, store, r.Built)
		if ok {
			retired++
		}
		if warning != "" {
			warnings = append(warnings, warning)
		}
	}
	return retired, warnings
}
