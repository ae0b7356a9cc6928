package report

import (
	"io"
	"time"

	"github.com/gymtrace/gymtrace/tokens"
)

// Defaults of [Options]: progress every 500 rollouts or 2 s; for an HTML report, payloads of up to
// 64 KiB each and 64 MiB in all, and 100,000 trace view rows in all.
const (
	DefaultProgressEvery    = 500
	DefaultProgressInterval = 2 * time.Second
	DefaultPayloadBytes     = 64 << 10
	DefaultPayloadBudget    = 64 << 20
	DefaultTraceRowBudget   = 100_000
)

// Options configures [Build]. The zero value reads every rollout of the directory, keeps no
// payloads and reports no progress.
type Options struct {
	// RunID is the run namespace the captures were written under (proxy.WithRunID, `--run-id`): it
	// only changes the trace ids the report links to (rollout.ID.TraceID); the directory given
	// to Build is already the run's. Default "" (Gym's layout).
	RunID string

	// CommandArgs are the arguments, shell-quoted, that select this run's captures in the commands
	// findings point to (`gymtrace calls ARGS ID`, `gymtrace tokens ARGS ID`), e.g. "--capture-dir
	// /data/c --run-id r1"; TokenCommandArgs are added for `gymtrace tokens` only (e.g. "--token-dir
	// /t"). Default "": "--capture-dir <the directory given to Build>" ([ShellQuote]d), and none.
	CommandArgs      string
	TokenCommandArgs string

	// Rollouts, when not nil, is the run's rollouts JSONL file (rollouts.ReadIDs): every rollout it
	// names is reported, in its order, also without a capture file (a finding). RolloutsName names
	// it in findings. Default nil: a rollout without any capture file cannot be seen.
	Rollouts     io.Reader
	RolloutsName string

	// UncorrelatedRolloutID is the id the capture proxy captured calls that named no rollout under
	// (proxy.WithUncorrelatedRolloutID, `gymtrace proxy --uncorrelated-rollout-id`); its calls are
	// reported as a finding. Default "": no such rollout.
	UncorrelatedRolloutID string

	// TokenStore, when not nil, is the run's training token store (docs/TOKENS.md §2): every
	// reported rollout with a token capture there is built as a finalization would build it now,
	// without freezing it ([tokenview.Read]), and a masked one is a finding
	// ([FindingTokensMasked]). Only such a rollout's .tokens.lock may be created, as every reader
	// of the store does. Default nil.
	TokenStore *tokens.Store

	// PayloadBytes, when positive, keeps each call's request, response and response_raw text for
	// the HTML report, JSON pretty-printed and cut after PayloadBytes bytes (on a UTF-8 boundary;
	// Payload.Truncated tells). Default 0: no payloads (the terminal report needs none).
	PayloadBytes int
	// PayloadBudget bounds the payload text kept for the whole report, in bytes; once it is spent,
	// later payloads are left out (Payload.Omitted). 0 or less means DefaultPayloadBudget.
	PayloadBudget int64

	// TraceViews, when true, builds each rollout's trace view (Rollout.Trace, [NewTraceView]) from
	// its capture records and its observations file (agentobs.ReadObservations), for the HTML
	// report. Default false: the observations files are not read.
	TraceViews bool
	// TraceRowBudget bounds the trace view rows kept for the whole report (a row is about 0.6 KB of
	// page, BenchmarkNewTraceView: the default is some 64 MB); once it is spent, later rollouts' views keep no rows and count them
	// (TraceView.Omitted, TraceView.BudgetSpent). 0 or less means DefaultTraceRowBudget.
	TraceRowBudget int

	// OnProgress, when not nil, is called from Build's goroutine after ProgressEvery rollouts (0 or
	// less: DefaultProgressEvery) were read since the last call, or ProgressInterval (0 or less:
	// DefaultProgressInterval) passed, whichever comes first, and once at the end when it was
	// called before. It must not block for long.
	OnProgress       func(Progress)
	ProgressEvery    int
	ProgressInterval time.Duration
}

// Progress is what [Options].OnProgress receives.
type Progress struct {
	Done    int           // rollouts read so far
	Total   int           // rollouts to read
	Calls   int           // call records read so far
	Elapsed time.Duration // since Build started
}
