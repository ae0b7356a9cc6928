package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rollouts"
	"github.com/gymtrace/gymtrace/tokens"
)

// attachTokenFlags are attach's flags of the token finalization (docs/TOKENS.md §0 T6, §3.9).
type attachTokenFlags struct {
	dir, builder    string
	allRows         bool
	maxMaskFraction float64
	minSamples      int
}

func (f *attachTokenFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	addTokenDirFlag(cmd, &f.dir)
	fl.BoolVar(&f.allRows, "token-all-rows", false, "finalize the token capture of every row with a rollout id, not only of those with token capture files (a row without any is then masked: nothing recorded)")
	fl.StringVar(&f.builder, "token-builder", tokens.BuilderPrefixMerging, "how a rollout's token entries are built into its response: prefix_merging (Gym's: one prefix chain) or per_request (every row is then masked: Gym's single-response delivery refuses it)")
	fl.Float64Var(&f.maxMaskFraction, "max-mask-fraction", math.NaN(), "stop without writing the output once more than this fraction (0-1) of the finalized rows is masked (Gym's token_id_capture.max_mask_fraction; default: no limit)")
	// The NaN behind "no limit" is not a value to show: help prints no "(default NaN)".
	fl.Lookup("max-mask-fraction").DefValue = "0"
	fl.IntVar(&f.minSamples, "mask-fraction-min-samples", rollouts.DefaultMaskFractionMinSamples, "rows finalized before --max-mask-fraction applies (Gym's mask_fraction_min_samples)")
}

// options checks the flags and returns the finalization's options: nil when the token directory
// does not exist and --token-all-rows is not given (no rollout can participate; nothing is created);
// a --token-dir that does not exist at all is an error ([existingTokenStore]).
func (f *attachTokenFlags) options(cmd *cobra.Command, run, runCaptureDir string) (*rollouts.TokenOptions, error) {
	dir, err := tokenStoreDir(f.dir, run, runCaptureDir)
	if err != nil {
		return nil, err
	}
	if err := checkTokenBuilder(f.builder); err != nil {
		return nil, err
	}
	if f.minSamples < 1 {
		return nil, usageErrorf("--mask-fraction-min-samples %d: want at least 1", f.minSamples)
	}
	opts := &rollouts.TokenOptions{Builder: f.builder, AllRows: f.allRows, MinSamples: f.minSamples}
	if cmd.Flags().Changed("max-mask-fraction") {
		if !(f.maxMaskFraction >= 0 && f.maxMaskFraction <= 1) {
			return nil, usageErrorf("--max-mask-fraction %v: want a fraction from 0 to 1", f.maxMaskFraction)
		}
		opts.MaxMaskFraction = &f.maxMaskFraction
	}
	if f.allRows {
		opts.Store, err = tokens.OpenStore(dir)
	} else {
		opts.Store, err = existingTokenStore(dir, f.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("attach: %w", err)
	}
	if opts.Store == nil {
		return nil, nil
	}
	return opts, nil
}

// beforeRetire is called once the output is durable (written, fsynced and renamed) and before any
// capture is retired; tests replace it to see the order.
var beforeRetire = func(output string) {}

// retireTokens retires the well-built captures once output is durable (T6, TOKENS.md §1.7 step 7)
// and returns how many it retired; a capture that cannot be retired is reported on stderr.
func retireTokens(cmd *cobra.Command, output string, opts *rollouts.TokenOptions, rs []rollouts.Retirable) int {
	if opts == nil {
		return 0
	}
	beforeRetire(output)
	retired, warnings := rollouts.Retire(opts.Store, rs)
	for _, w := range warnings {
		cmdNotef(cmd, "%s", w)
	}
	return retired
}

// reportTokens lists the masked rollouts and the finalization's warnings on stderr and returns the
// summary's token part ("" when no row participated).
func reportTokens(cmd *cobra.Command, ts rollouts.TokenSummary, retired int) string {
	noteRowErrors(cmd, ts.Warnings, "token capture", "token capture warnings")
	for i, m := range ts.Masked {
		if i == maxReported {
			cmdNotef(cmd, "... and %d more rollouts with masked token captures", len(ts.Masked)-maxReported)
			break
		}
		cmdNotef(cmd, "line %d: rollout %s token capture masked (mask_sample): %s", m.Line, m.RolloutID, m.Cause)
	}
	if ts.Finalized == 0 {
		return ""
	}
	msg := fmt.Sprintf("; %d token capture%s finalized (%d masked, %d retired", ts.Finalized, pluralSuffix(ts.Finalized), len(ts.Masked), retired)
	if ts.Kept > 0 {
		msg += fmt.Sprintf(", %d kept as finalized before", ts.Kept)
	}
	return msg + ")"
}
