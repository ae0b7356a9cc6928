package report

import (
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rollouts"
)

// Report is the at-a-glance view of one collection run, built by [Build].
type Report struct {
	CaptureDir   string // the capture directory read, as given to Build
	RunID        string // Options.RunID
	RolloutsName string // Options.RolloutsName when a rollouts file was read, else ""
	// Rollouts holds one entry per rollout: the rollouts file's rollouts in its order (when one was
	// read), then the captured rollouts it does not name, in capturedir.Compare order.
	Rollouts []Rollout
	Totals   Totals // aggregates every rollout
	// Findings lists the health findings, run-level ones first, then per rollout in Rollouts order.
	Findings []Finding
}

// Rollout is one rollout's row.
type Rollout struct {
	ID string // the rollout id
	// TraceID is the rollout's trace id (32 lowercase hex), rollout.ID{Run: RunID, Rollout: ID}.TraceID().
	TraceID string
	// RolloutsLine is the 1-based line of the rollouts file naming the rollout; 0 when none does.
	RolloutsLine int
	HasCapture   bool   // the directory holds the rollout's capture file
	Calls        []Call // the valid call records in capture order (SPEC §3.2)
	// Metrics is the SPEC §5.2 aggregate of Calls (tokens, total latency in milliseconds, number of
	// calls); every field nil when unknown.
	Metrics capture.Metrics
	// TTFTP50MS is the median time to first token over the calls that have one, in milliseconds
	// (nearest rank, see [Percentile]); nil when no call has one.
	TTFTP50MS   *float64
	Errors      []CategoryCount // the calls by error_category (SPEC §3.3), most frequent first
	FailedCalls int             // calls with an error category
	Gaps        []capture.Gap   // the gaps of the rollout's attachment (SPEC §5.3)
	// DamagedLines counts the capture lines that could not be read (records_unreadable).
	DamagedLines int
	// Flags are the rollout's health flags (one per kind of finding about it), in [FindingKind]
	// order; empty for a healthy rollout.
	Flags []FindingKind
	// FirstStartedAt and LastCompletedAt bound the calls in UTC Unix seconds; nil without calls
	// that carry times.
	FirstStartedAt, LastCompletedAt *float64
	// TokenMaskCause says why the rollout's training token capture is masked, or would be when
	// finalized now (Options.TokenStore, [tokenview.Read]); "" when it is not, or has none.
	TokenMaskCause string
	// Trace is the rollout's trace view (Options.TraceViews); nil without it.
	Trace *TraceView

	health          rollouts.RolloutHealth // what Gaps say
	tokensFrozen    bool                   // the token capture is frozen (finalized)
	observationsErr error                  // why the observations file cannot be read (nil: it can, or there is none)
}

// Call is one call record of a rollout: the SPEC §3.2 record without its payload fields (Request,
// Response, RequestRaw and ResponseRaw are nil), plus the payload text the HTML report shows when
// Options.PayloadBytes is positive.
type Call struct {
	capture.ModelCallRecord
	// Payloads are, when present: "request" (or "request_raw"), "response", "response_raw". Empty
	// without Options.PayloadBytes.
	Payloads []Payload
}

// Payload is one payload field of a call, as text for display.
type Payload struct {
	Name string // the record key: request, request_raw, response or response_raw
	// Text is the value: JSON objects pretty-printed with two-space indentation, raw strings as
	// they are; cut to Options.PayloadBytes bytes when Truncated; empty when Omitted.
	Text string
	// Size is the size of the whole value in bytes (the record's compact JSON or raw text).
	Size      int
	Truncated bool // Text is cut
	Omitted   bool // the report's payload budget was spent: Text is empty
}

// CategoryCount is the number of calls with one error category.
type CategoryCount struct {
	Category string
	Count    int
}

// Totals aggregates the whole run.
type Totals struct {
	Rollouts          int             // rollouts reported
	RolloutsWithCalls int             // rollouts with at least one valid call
	Calls             int             // valid calls
	FailedCalls       int             // calls with an error category
	DamagedLines      int             // capture lines that could not be read, over every rollout
	Metrics           capture.Metrics // the SPEC §5.2 aggregate over every call of the run
	// Latency and TTFT percentiles over every call that has the value, in milliseconds (nearest
	// rank); nil when no call has one.
	LatencyP50MS, LatencyP95MS, TTFTP50MS, TTFTP95MS *float64
	// Errors counts every call by error category, most frequent first.
	Errors []CategoryCount
	// FirstStartedAt and LastCompletedAt bound the run's calls in UTC Unix seconds.
	FirstStartedAt, LastCompletedAt *float64
}
