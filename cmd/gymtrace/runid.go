package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
)

// Flag names of run namespaces and prefix-less correlation.
const (
	runIDFlag                 = "run-id"
	uncorrelatedRolloutIDFlag = "uncorrelated-rollout-id"
)

// addRunIDFlag registers --run-id on a command that reads or writes captures, stored in run.
func addRunIDFlag(cmd *cobra.Command, run *string) {
	cmd.Flags().Var((*runIDValue)(run), runIDFlag, "run namespace: captures live in <capture-dir>/RUN/ and trace ids derive from gymtrace/rollout/RUN/<rollout_id> "+
		"(RUN matches "+rollout.IDPattern+", at most 200 bytes; default: none, Gym's layout)")
}

// runIDValue is --run-id's flag value: a string that may not be given empty, since an empty run
// namespace would silently read or write the top-level directory (leave the flag out for that).
type runIDValue string

func (v *runIDValue) String() string { return string(*v) }

func (v *runIDValue) Set(s string) error {
	if s == "" {
		return errors.New("empty: leave --run-id out for captures outside any run namespace")
	}
	*v = runIDValue(s)
	return nil
}

func (v *runIDValue) Type() string { return "string" }

// runCaptureDir checks --capture-dir and --run-id and returns the capture directory of the run: dir,
// or dir/RUN. A violation is a usage error naming the value and the rule.
func runCaptureDir(dir, run string) (string, error) {
	if err := checkCaptureDir(dir); err != nil {
		return "", err
	}
	if err := checkRunID(run); err != nil {
		return "", err
	}
	d, err := rollout.RunDir(dir, run)
	if err != nil {
		return "", usageErrorf("--%s: %w", runIDFlag, err)
	}
	return d, nil
}

// checkRunID validates a given --run-id (rollout.ValidateRun, the D12 rule of rollout ids); "" is no
// run namespace (the flag left out: a flag given empty fails at parsing, runIDValue).
func checkRunID(run string) error {
	if run == "" {
		return nil
	}
	if err := rollout.ValidateRun(run); err != nil {
		return usageErrorf("--%s: %w", runIDFlag, err)
	}
	return nil
}

// correlationOptions are the proxy's --run-id and --uncorrelated-rollout-id.
type correlationOptions struct {
	runID        string
	uncorrelated string
}

// addCorrelationFlags registers --run-id and --uncorrelated-rollout-id on the proxy command.
func addCorrelationFlags(cmd *cobra.Command, o *correlationOptions) {
	addRunIDFlag(cmd, &o.runID)
	cmd.Flags().StringVar(&o.uncorrelated, uncorrelatedRolloutIDFlag, "",
		"capture calls that name no rollout (no /ng-rollout/<id>/ prefix, no "+rollout.Header+" header, no "+rollout.BaggageKey+
			" baggage) under this rollout id instead of forwarding them uncaptured (they are counted and logged either way)")
}

// sdkOptions validates the flags and returns their proxy options; usage errors name the flag, the
// value and the rule.
func (o correlationOptions) sdkOptions() ([]proxy.Option, error) {
	if err := checkRunID(o.runID); err != nil {
		return nil, err
	}
	var opts []proxy.Option
	if o.runID != "" {
		opts = append(opts, proxy.WithRunID(o.runID))
	}
	if o.uncorrelated != "" {
		if err := rollout.ValidateID(o.uncorrelated); err != nil {
			return nil, usageErrorf("--%s: %w", uncorrelatedRolloutIDFlag, err)
		}
		opts = append(opts, proxy.WithUncorrelatedRolloutID(o.uncorrelated))
	}
	return opts, nil
}
