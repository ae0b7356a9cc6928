package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/capturedir"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rollouts"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/tokenview"
	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/tokens"
)

// ErrNoCaptureDir is matched (errors.Is) by the error [Build] returns when the capture directory
// does not exist.
var ErrNoCaptureDir = errors.New("capture directory does not exist")

// Build reads the capture directory dir and builds its report (see the package doc): one [Rollout]
// per rollout of Options.Rollouts (in file order) and per rollout with a capture file or marker in
// dir, its totals and its findings. dir is never created or modified (Options.TokenStore may get
// a rollout's .tokens.lock, see there).
//
// Each rollout is read as `gymtrace attach` reads it (capture.BuildAttachment, and its observations
// file with agentobs.ReadObservations): capture problems — no records, damaged lines, the
// incomplete marker, a file that cannot be read, a rollout's or the unattributed observations file
// that cannot be read (a symbolic link, a FIFO, a directory: never opened) — are findings, never
// errors. Errors: dir missing (matching [ErrNoCaptureDir]) or not a directory, its listing failing,
// reading Options.Rollouts failing, and ctx being cancelled (checked between rollouts); each names
// what failed. Rows of the rollouts file that cannot be read are findings ([FindingMalformedRow]).
func Build(ctx context.Context, dir string, opts Options) (*Report, error) {
	entries, err := capturedir.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("report: %w: %s", ErrNoCaptureDir, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	store, err := capture.NewStore(dir) // dir exists: NewStore creates nothing
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if opts.CommandArgs == "" {
		opts.CommandArgs = "--capture-dir " + ShellQuote(dir)
	}
	rep := &Report{CaptureDir: dir, RunID: opts.RunID}

	// The rollouts to report: the rollouts file's first, then the captured ones it does not name.
	var items []rollouts.RowID
	seen := make(map[string]bool)
	if opts.Rollouts != nil {
		rep.RolloutsName = cmp.Or(opts.RolloutsName, "the rollouts file")
		ids, rowErrs, err := rollouts.ReadIDs(ctx, opts.Rollouts)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", rep.RolloutsName, err)
		}
		for _, re := range rowErrs {
			rep.Findings = append(rep.Findings, Finding{Kind: FindingMalformedRow,
				Message: fmt.Sprintf("%s: %v", rep.RolloutsName, re)})
		}
		for _, id := range ids {
			if !seen[id.RolloutID] { // a retried row names its rollout again: report it at its first line
				seen[id.RolloutID] = true
				items = append(items, id)
			}
		}
	}
	hasCapture := make(map[string]bool, len(entries))
	for _, e := range entries {
		hasCapture[e.RolloutID] = e.HasCapture
		if !seen[e.RolloutID] {
			seen[e.RolloutID] = true
			items = append(items, rollouts.RowID{RolloutID: e.RolloutID})
		}
	}
	if len(entries) == 0 {
		rep.Findings = append(rep.Findings, Finding{Kind: FindingNoCapture,
			Message: "the capture directory holds no capture file or marker: no call was captured there"})
	}
	if f := unattributedFinding(store); f != nil {
		rep.Findings = append(rep.Findings, *f)
	}

	p := newProgress(&opts, len(items))
	budget := cmp.Or(max(opts.PayloadBudget, 0), DefaultPayloadBudget)
	pk := &payloadKeeper{max: opts.PayloadBytes, budget: budget}
	rowBudget := cmp.Or(max(opts.TraceRowBudget, 0), DefaultTraceRowBudget)
	stores := []*capture.Store{store}
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("report: after %d of %d rollouts: %w", p.done, len(items), err)
		}
		a, err := capture.BuildAttachment(stores, it.RolloutID, false)
		if err != nil {
			// Only an id that is not a valid file name fails; rollouts.ReadIDs never returns one.
			return nil, fmt.Errorf("report: rollout %s: %w", it.RolloutID, err)
		}
		r := newRollout(&a, rep.RunID, it.Line, hasCapture[it.RolloutID], pk)
		obs := readObservations(store, it.RolloutID)
		r.observationsErr = obs.err
		if opts.TraceViews {
			r.Trace = obs.traceView(a.Calls, rowBudget)
			rowBudget -= len(r.Trace.Spans)
		}
		if err := tokenMask(&r, opts.TokenStore); err != nil {
			return nil, fmt.Errorf("report: rollout %s: %w", it.RolloutID, err)
		}
		rep.Findings = append(rep.Findings, rolloutFindings(&r, &opts)...)
		rep.Rollouts = append(rep.Rollouts, r)
		p.rollout(len(r.Calls))
	}
	p.finish()
	rep.Totals = totals(rep.Rollouts)
	return rep, nil
}

// newRollout builds one rollout's row from its attachment.
func newRollout(a *capture.Attachment, runID string, line int, hasCapture bool, pk *payloadKeeper) Rollout {
	h, _ := rollouts.HealthOf(line, a)
	r := Rollout{
		ID:           a.RolloutID,
		TraceID:      rollout.ID{Run: runID, Rollout: a.RolloutID}.TraceID().String(),
		RolloutsLine: line,
		HasCapture:   hasCapture,
		Metrics:      a.Metrics,
		Gaps:         a.Gaps,
		DamagedLines: h.UnreadableLines,
		health:       h,
	}
	r.Calls = make([]Call, len(a.Calls))
	var ttft []float64
	for i := range a.Calls {
		rec := &a.Calls[i]
		r.Calls[i] = Call{ModelCallRecord: *rec, Payloads: pk.keep(rec)}
		c := &r.Calls[i].ModelCallRecord
		c.Request, c.Response, c.RequestRaw, c.ResponseRaw = nil, nil, nil, nil
		if rec.LatencyTTFTMS != nil {
			ttft = append(ttft, *rec.LatencyTTFTMS)
		}
		r.FirstStartedAt = minPtr(r.FirstStartedAt, rec.StartedAt)
		r.LastCompletedAt = maxPtr(r.LastCompletedAt, rec.CompletedAt)
	}
	r.TTFTP50MS = Percentile(ttft, 50)
	r.Errors, r.FailedCalls = countCategories(r.Calls)
	return r
}

// observationsRead is one rollout's observations file as [agentobs.ReadObservations] read it.
type observationsRead struct {
	lines   []agentobs.ObservationLine
	damaged int
	exists  bool
	err     error
}

// readObservations reads rolloutID's observations file in store with the reader `gymtrace attach`
// joins it with ([agentobs.ReadObservations]: never through a symbolic link, only a regular file):
// once per rollout, for its trace view and for [FindingObservationsUnreadable].
func readObservations(store *capture.Store, rolloutID string) observationsRead {
	var o observationsRead
	o.lines, o.damaged, o.exists, o.err = agentobs.ReadObservations(store, rolloutID)
	return o
}

// traceView builds the trace view of the rollout with the calls (valid capture records in capture
// order) and o, keeping at most budget rows (the rest counted); a file that cannot be read leaves
// the model calls alone, and the view says why.
func (o *observationsRead) traceView(calls []capture.ModelCallRecord, budget int) *TraceView {
	v := NewTraceView(calls, o.lines, o.exists, o.damaged)
	if o.err != nil {
		v.ObservationsError = o.err.Error()
	}
	if len(v.Spans) > budget {
		v.cut(budget)
		v.BudgetSpent = true
	}
	return v
}

// tokenMask sets r's token mask cause from its capture in store (nil: none), read without freezing.
// A capture that cannot be read is masked with that cause (a finalization's freeze would fail too);
// the error is the store's refusal of the id or a failing stat.
func tokenMask(r *Rollout, store *tokens.Store) error {
	if store == nil {
		return nil
	}
	has, err := store.HasCapture(r.ID)
	if err != nil || !has {
		return err
	}
	v, err := tokenview.Read(store, r.ID, tokens.BuilderPrefixMerging)
	switch {
	case err != nil:
		r.TokenMaskCause = "the token capture cannot be read: " + tokens.ExceptionText(err)
	case v.Masked:
		r.TokenMaskCause, r.tokensFrozen = v.Cause, v.Frozen
	}
	return nil
}

// progress decides when Build calls Options.OnProgress.
type progress struct {
	fn       func(Progress)
	every    int
	interval time.Duration
	start    time.Time
	last     time.Time
	total    int
	since    int
	done     int
	calls    int
	called   bool
}

func newProgress(opts *Options, total int) *progress {
	now := time.Now()
	return &progress{fn: opts.OnProgress, total: total, start: now, last: now,
		every:    cmp.Or(max(opts.ProgressEvery, 0), DefaultProgressEvery),
		interval: cmp.Or(max(opts.ProgressInterval, 0), DefaultProgressInterval)}
}

func (p *progress) rollout(calls int) {
	p.done++
	p.calls += calls
	p.since++
	now := time.Now()
	if p.fn == nil || p.done == p.total || (p.since < p.every && now.Sub(p.last) < p.interval) {
		return
	}
	p.since, p.last = 0, now
	p.report(now)
}

// finish reports the end, when progress was reported before.
func (p *progress) finish() {
	if p.called {
		p.report(time.Now())
	}
}

func (p *progress) report(now time.Time) {
	p.called = true
	p.fn(Progress{Done: p.done, Total: p.total, Calls: p.calls, Elapsed: now.Sub(p.start)})
}
