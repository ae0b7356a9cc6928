package report

import (
	"cmp"
	"fmt"
	"strings"
)

// FindingKind names one kind of health finding. The values are stable strings (they appear in the
// HTML report as data-kind attributes).
type FindingKind string

// The kinds of finding. A rollout's flags are listed in the order of the constants from
// FindingNoRecords on; the first two are run-level.
const (
	// FindingNoCapture: the capture directory holds no capture file and no marker at all (run level).
	FindingNoCapture FindingKind = "no_capture"
	// FindingMalformedRow: a row of the rollouts file is not a JSON object or has a malformed
	// rollout id (run level; Detail names the line and the rule).
	FindingMalformedRow FindingKind = "malformed_row"
	// FindingNoRecords: the rollout has no captured call and no damaged line — no capture file (a
	// rollout of the rollouts file while capture was on), an empty one, or only the marker.
	FindingNoRecords FindingKind = "no_records"
	// FindingDamagedLines: some capture lines could not be read and were skipped (SPEC §2.5,
	// gap model_call_capture_records_unreadable).
	FindingDamagedLines FindingKind = "damaged_lines"
	// FindingIncomplete: the .capture.incomplete marker exists: at least one capture write failed or
	// a call's capture stopped at a bound (SPEC §0 D15), calls or their payloads may be missing
	// (SPEC §2.6, gap model_call_capture_incomplete).
	FindingIncomplete FindingKind = "incomplete"
	// FindingUnreadable: the capture could not be read at all (gap model_call_capture_unreadable).
	FindingUnreadable FindingKind = "unreadable"
	// FindingObservationsUnreadable: the rollout's <id>.observations.jsonl exists but cannot be
	// read — a symbolic link, a FIFO, a directory, another file type or a hard link, which the
	// store never opens (package capture's ErrNotRegularFile), or a failing read: `gymtrace attach`
	// joins none of its observations and reports the row (agentobs.ReadObservations).
	FindingObservationsUnreadable FindingKind = "observations_unreadable"
	// FindingDuplicateCalls: some records repeat a model_call_id of an earlier record of the same
	// capture file (a call recorded twice, by an older version or another tool).
	FindingDuplicateCalls FindingKind = "duplicate_calls"
	// FindingTokensMasked: the rollout's training token capture is masked (mask_sample), or would
	// be when finalized now (docs/TOKENS.md §3.6–3.7); the message gives the cause.
	FindingTokensMasked FindingKind = "tokens_masked"
	// FindingAllCallsFailed: every captured call of the rollout has an error category.
	FindingAllCallsFailed FindingKind = "all_calls_failed"
	// FindingUncorrelated: the rollout holds the calls that named no rollout
	// (Options.UncorrelatedRolloutID).
	FindingUncorrelated FindingKind = "uncorrelated_calls"
	// FindingNotInRollouts: a captured rollout the rollouts file does not name (its row may have
	// failed or been written elsewhere).
	FindingNotInRollouts FindingKind = "not_in_rollouts"
)

// shortLabels are the kinds' labels for table cells.
var shortLabels = map[FindingKind]string{
	FindingNoCapture:              "no capture",
	FindingMalformedRow:           "bad row",
	FindingNoRecords:              "no calls",
	FindingDamagedLines:           "damaged",
	FindingIncomplete:             "incomplete",
	FindingUnreadable:             "unreadable",
	FindingObservationsUnreadable: "obs unreadable",
	FindingDuplicateCalls:         "duplicates",
	FindingTokensMasked:           "masked",
	FindingAllCallsFailed:         "all failed",
	FindingUncorrelated:           "uncorrelated",
	FindingNotInRollouts:          "not listed",
}

// Short returns the kind's short label for table cells, e.g. "no calls", "damaged".
func (k FindingKind) Short() string { return cmp.Or(shortLabels[k], string(k)) }

// Finding is one health finding.
type Finding struct {
	Kind      FindingKind
	RolloutID string // the rollout the finding is about; "" for run-level findings
	Message   string // a complete sentence for people, e.g. "rollout 3-1 has no captured calls: ..."
}

// rolloutFindings returns the findings of one rollout, in flag order, and sets r.Flags.
func rolloutFindings(r *Rollout, opts *Options) []Finding {
	var out []Finding
	add := func(k FindingKind, format string, args ...any) {
		r.Flags = append(r.Flags, k)
		out = append(out, Finding{Kind: k, RolloutID: r.ID, Message: fmt.Sprintf(format, args...)})
	}
	incomplete, unreadable := r.health.Incomplete, r.health.ReadFailed
	switch {
	case unreadable:
	case len(r.Calls) == 0 && r.DamagedLines == 0 && (r.health.NoRecords || incomplete):
		where := "no capture file"
		switch {
		case r.HasCapture:
			where = "its capture file holds no record"
		case incomplete:
			where = "only its .capture.incomplete marker exists"
		}
		if r.RolloutsLine > 0 {
			add(FindingNoRecords, "rollout %s has no captured calls although capture was on: %s (named on line %d of %s)",
				r.ID, where, r.RolloutsLine, cmp.Or(opts.RolloutsName, "the rollouts file"))
		} else {
			add(FindingNoRecords, "rollout %s has no captured calls: %s", r.ID, where)
		}
	}
	if r.DamagedLines > 0 {
		add(FindingDamagedLines, "rollout %s: %d damaged capture line%s skipped (not a readable call record)", r.ID, r.DamagedLines, plural(r.DamagedLines))
	}
	if incomplete {
		add(FindingIncomplete, "rollout %s is marked incomplete: at least one capture write failed or a call's capture stopped at a bound (SPEC §0 D15): calls or their payloads may be missing", r.ID)
	}
	if unreadable {
		add(FindingUnreadable, "rollout %s: the capture could not be read (see `gymtrace calls %s %s`)", r.ID, opts.CommandArgs, ShellQuote(r.ID))
	}
	if r.observationsErr != nil {
		add(FindingObservationsUnreadable, "rollout %s: its observations file cannot be read, so gymtrace attach joins none of its observations into a row without ng_agent_observations (and reports the row): %v", r.ID, r.observationsErr)
	}
	if n := r.health.DuplicateCalls; n > 0 {
		verb := "repeat"
		if n == 1 {
			verb = "repeats"
		}
		add(FindingDuplicateCalls, "rollout %s: %d record%s %s a model_call_id already in its capture file (a call recorded twice: tokens and joins count it twice)", r.ID, n, plural(n), verb)
	}
	if r.TokenMaskCause != "" {
		state := "would be masked (mask_sample) when finalized"
		if r.tokensFrozen {
			state = "is masked (mask_sample)"
		}
		add(FindingTokensMasked, "rollout %s: its token capture %s: %s (see `gymtrace tokens %s %s`)", r.ID, state, r.TokenMaskCause, tokensArgs(opts), ShellQuote(r.ID))
	}
	if len(r.Calls) > 0 && r.FailedCalls == len(r.Calls) {
		add(FindingAllCallsFailed, "rollout %s: all %d call%s failed (%s)", r.ID, len(r.Calls), plural(len(r.Calls)), categoryList(r.Errors))
	}
	if opts.UncorrelatedRolloutID != "" && r.ID == opts.UncorrelatedRolloutID && len(r.Calls) > 0 {
		add(FindingUncorrelated, "%d call%s named no rollout (captured under the uncorrelated rollout id %s)", len(r.Calls), plural(len(r.Calls)), r.ID)
	}
	if opts.Rollouts != nil && r.RolloutsLine == 0 && r.ID != opts.UncorrelatedRolloutID {
		add(FindingNotInRollouts, "rollout %s was captured but %s does not name it", r.ID, cmp.Or(opts.RolloutsName, "the rollouts file"))
	}
	return out
}

// tokensArgs are the arguments of the `gymtrace tokens` command a finding names.
func tokensArgs(opts *Options) string {
	if opts.TokenCommandArgs == "" {
		return opts.CommandArgs
	}
	return opts.CommandArgs + " " + opts.TokenCommandArgs
}

// categoryList formats category counts as "2 rate_limit, 1 stream_truncated".
func categoryList(cs []CategoryCount) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%d %s", c.Count, c.Category)
	}
	return strings.Join(parts, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
