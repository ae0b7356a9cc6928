package rollouts

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gymtrace/gymtrace/capture"
)

// errNoStores is returned by Attach when it is given no capture store.
var errNoStores = errors.New("no capture store given")

// Summary counts what [Attach] did. Every input line is counted in Rows and in exactly one of
// Attached, Unchanged and Malformed.
type Summary struct {
	Rows      int // input lines read (blank lines included)
	Attached  int // rows given an ng_model_call_capture attachment
	Unchanged int // rows without a rollout identity and blank lines, written as they were
	Malformed int // rows written unchanged because they could not be read; see RowErrors

	RowErrors []RowError // each malformed row, in input order
	// Rollouts lists the attached rollouts whose capture has a problem (SPEC §5.3 gaps), in input order.
	Rollouts []RolloutHealth

	ObservationsJoined int // rows whose ng_agent_observations was joined with their calls (SPEC §5.4)
	// ObservationErrors describes each attached row whose ng_agent_observations is not a valid
	// bundle (SPEC §6.1–6.2); such a row still gets its attachment and keeps that key's text.
	ObservationErrors []RowError
	// TranscriptErrors describes each row whose Claude Code directory ([Options].ClaudeCodeDirKey)
	// holds an entry the reader refuses (SPEC §0 D16, a *claudecode.TranscriptError); such a row gets
	// the bundle with the gap claude_code_transcript_unreadable, joined like any other.
	TranscriptErrors []RowError
	// ObservationReadErrors describes each attached row whose observations could not be read (an
	// [*ObservationsReadError]: e.g. a permission error on <id>.observations.jsonl); such a row gets
	// its attachment and keeps its ng_agent_observations as it was (none).
	ObservationReadErrors []RowError

	// Projected counts the attached rows given an ng_trajectory by a successful projection
	// (Options.Trajectory, SPEC §5.5 step 3).
	Projected int
	// TrajectoryErrors describes each attached row whose projection failed; such a row carries the
	// trajectory_projection_failed gap (SPEC §5.5) and is still written.
	TrajectoryErrors []RowError
	// InputsMatched counts the rows the projection ran on whose task keys came from Options.Inputs.
	InputsMatched int

	// CaptureBytes counts the bytes of the capture files read for the attached rows (each file's
	// size when its rollout was attached; a rollout attached twice counts twice): what takes the
	// time on a run with large payloads, while the rollouts input may be small.
	CaptureBytes int64

	// Tokens is what the token finalization did (Options.Tokens).
	Tokens TokenSummary

	// RepeatedRows lists each attached row whose rollout id an earlier row of the input already
	// has (a user trial's input named one rollout twice): both rows carry the same calls, so a sum
	// over the file counts them twice. Err names the rollout and the first row's line.
	RepeatedRows []RowError
}

// RowError is one input row that could not be read: a line that is not a JSON object, or a row
// whose rollout id breaks SPEC §1.2 (e.g. _ng_attempt_index not an integer) or is one the proxy
// refuses (SPEC D12, rollout.ValidateID). Err names the value and the rule.
type RowError struct {
	Line int   // 1-based input line number
	Err  error // why the row could not be read
}

// Error returns "line <n>: <reason>".
func (e RowError) Error() string { return "line " + strconv.Itoa(e.Line) + ": " + e.Err.Error() }

// Unwrap returns the underlying error (e.g. one matching rollout.ErrInvalidID).
func (e RowError) Unwrap() error { return e.Err }

// MalformedRowsError is the error [Attach] returns, after writing every row (the malformed ones
// unchanged), when some rows were malformed.
type MalformedRowsError struct {
	Rows []RowError // the malformed rows in input order; never empty
}

// maxListed is how many row errors MalformedRowsError's message spells out.
const maxListed = 3

// Error names the number of malformed rows and the first few of them.
func (e *MalformedRowsError) Error() string {
	s := "s"
	if len(e.Rows) == 1 {
		s = ""
	}
	msg := fmt.Sprintf("rollouts attach: %d malformed row%s written unchanged: ", len(e.Rows), s)
	for i, r := range e.Rows {
		if i == maxListed {
			return msg + fmt.Sprintf("; and %d more", len(e.Rows)-maxListed)
		}
		if i > 0 {
			msg += "; "
		}
		msg += r.Error()
	}
	return msg
}

// Unwrap returns every row error, so errors.Is and errors.As look at each of them.
func (e *MalformedRowsError) Unwrap() []error { return asErrors(e.Rows) }

func asErrors(rows []RowError) []error {
	errs := make([]error, len(rows))
	for i, r := range rows {
		errs[i] = r
	}
	return errs
}

// RolloutHealth describes the capture problems of one attached rollout: its attachment's gaps
// (SPEC §5.3), and records that repeat a model_call_id (a call recorded twice, by an older version
// or another tool: the attachment keeps them as Gym's reader would, counts and joins are then
// ambiguous).
type RolloutHealth struct {
	Line            int    // 1-based input line of the row
	RolloutID       string // the row's rollout id
	Calls           int    // valid calls attached
	NoRecords       bool   // model_call_capture_no_records: no capture file or marker, or an empty file
	Incomplete      bool   // model_call_capture_incomplete: the .capture.incomplete marker exists
	UnreadableLines int    // model_call_capture_records_unreadable: damaged lines skipped
	ReadFailed      bool   // model_call_capture_unreadable: the capture could not be read at all
	DuplicateCalls  int    // calls whose model_call_id an earlier call of the file already has
}

// HealthOf returns the health of the attachment of input line line and whether it has any problem.
func HealthOf(line int, a *capture.Attachment) (RolloutHealth, bool) {
	h := RolloutHealth{Line: line, RolloutID: a.RolloutID, Calls: len(a.Calls)}
	for _, g := range a.Gaps {
		switch g.Code {
		case capture.GapNoRecords:
			h.NoRecords = true
		case capture.GapIncomplete:
			h.Incomplete = true
		case capture.GapUnreadable:
			h.ReadFailed = true
		case capture.GapRecordsUnreadable:
			n, err := strconv.Atoi(strings.TrimPrefix(g.Detail, "count="))
			if err != nil || n < 1 {
				n = 1
			}
			h.UnreadableLines = n
		}
	}
	seen := make(map[string]bool, len(a.Calls))
	for _, c := range a.Calls {
		if c.ModelCallID == nil {
			continue
		}
		if seen[*c.ModelCallID] {
			h.DuplicateCalls++
		}
		seen[*c.ModelCallID] = true
	}
	return h, len(a.Gaps) > 0 || h.DuplicateCalls > 0
}

// Attach copies the rollout JSONL rows of in to out, adding to each finished rollout its captured
// model calls (SPEC §5.5 step 2: the attachment of SPEC §5.1–§5.3 that [capture.BuildAttachment]
// builds from stores, searched in order) and, with opts.Trajectory, its ng_trajectory (SPEC §5.5
// step 3, see projectTrajectory). Per input line exactly one output line is written:
//   - a row whose rollout id SPEC §1.2 derives (from _ng_rollout_id, or _ng_task_index and
//     _ng_rollout_index, with an optional _ng_attempt_index) gets the key ng_model_call_capture,
//     replacing an existing one in place, else as the last key; every other key keeps its position
//     and its JSON text, the object is compact at the top level. Its ng_agent_observations is
//     validated and joined with the calls (joinObservations; an invalid one is kept as it was and
//     listed in Summary.ObservationErrors; observations that cannot be read are listed in
//     Summary.ObservationReadErrors; a Claude Code directory whose transcripts are refused,
//     SPEC §0 D16, gives the gap claude_code_transcript_unreadable and is listed in
//     Summary.TranscriptErrors). The calls carry payloads as opts.IncludePayloads says;
//   - a row without an identity, and a blank line, is written unchanged;
//   - a line that is not a JSON object, or a row whose id is malformed (SPEC §1.2, or a derived id
//     the proxy would refuse, SPEC D12), is written unchanged and listed in Summary.RowErrors.
//
// Unchanged lines keep their bytes, "\r\n" included; an attached row ends as its input line did
// ("\r\n" or "\n"), so a CRLF file stays CRLF throughout; a last line without a newline gets "\n".
//
// With opts.Tokens, every participating attached row is then finalized as the reference's
// collector does (docs/TOKENS.md §0 T6, §1.7 step 5, [TokenOptions]); Summary.Tokens lists the
// masked rows and the builds to [Retire] once out is durable. A row whose capture an earlier
// finalization retired is kept as it is, and so is one that already carries a masking
// finalization. Too many masked rows stop Attach with a [*MaskFractionError].
//
// When every row was written and some were malformed, the error is a [*MalformedRowsError].
// Reading, writing or building an attachment failing, passing no stores, and ctx being cancelled
// (checked between rows) stop Attach at once with an error; out then holds part of the output and
// the Summary counts the rows handled so far. Capture problems of a rollout are not errors but gaps
// in its attachment, listed in Summary.Rollouts.
func Attach(ctx context.Context, in io.Reader, out io.Writer, stores []*capture.Store, opts Options) (Summary, error) {
	var sum Summary
	if len(stores) == 0 {
		return sum, fmt.Errorf("rollouts attach: %w", errNoStores)
	}
	p := newProgress(opts)
	lr := newLineReader(in)
	firstLine := make(map[string]int) // rollout id -> the line of its first attached row
	w := bufio.NewWriterSize(out, 256<<10)
	for {
		if err := ctx.Err(); err != nil {
			return sum, fmt.Errorf("rollouts attach: after %d rows: %w", sum.Rows, err)
		}
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sum, fmt.Errorf("rollouts attach: read line %d: %w", lr.line+1, err)
		}
		sum.Rows++
		outLine, err := attachRow(&sum, firstLine, lr.line, line, stores, opts)
		if err != nil {
			return sum, fmt.Errorf("rollouts attach: line %d: %w", lr.line, err)
		}
		if outLine[len(outLine)-1] != '\n' { // lineReader never returns an empty line
			outLine = append(outLine, lineEnding(line)...)
		}
		if _, err := w.Write(outLine); err != nil {
			return sum, fmt.Errorf("rollouts attach: write line %d: %w", lr.line, err)
		}
		p.row(&sum, lr.read)
	}
	if err := w.Flush(); err != nil {
		return sum, fmt.Errorf("rollouts attach: write: %w", err)
	}
	if sum.Malformed > 0 {
		return sum, &MalformedRowsError{Rows: sum.RowErrors}
	}
	return sum, nil
}

// lineEnding returns the line terminator the output line of input line gets: "\r\n" when line ends
// with one, else "\n" (also for a last line without a terminator).
func lineEnding(line []byte) string {
	if bytes.HasSuffix(line, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// attachRow returns the output line of input line n (see Attach) and counts it in sum; firstLine
// maps each rollout attached so far to its first row's line.
func attachRow(sum *Summary, firstLine map[string]int, n int, line []byte, stores []*capture.Store, opts Options) ([]byte, error) {
	if isBlank(line) {
		sum.Unchanged++
		return line, nil
	}
	l, id, ok, err := parseRow(line)
	switch {
	case err != nil:
		sum.Malformed++
		sum.RowErrors = append(sum.RowErrors, RowError{Line: n, Err: err})
		return line, nil
	case !ok:
		sum.Unchanged++
		return line, nil
	}
	var prior derivedGaps
	if opts.Trajectory {
		prior = priorGaps(&l) // before the attachment and the join replace what it reads
	}
	a, err := capture.BuildAttachment(stores, id, (opts.IncludePayloads || opts.Trajectory) && !hasRedactedHistory(&l))
	if err != nil {
		return nil, err
	}
	sum.CaptureBytes += captureSize(stores, id)
	if err := l.Set(capture.AttachmentKey, a.AppendJSON(nil)); err != nil {
		return nil, err
	}
	joined, refused, err := joinObservations(&l, id, stores, a.Calls, opts)
	if refused != nil {
		sum.TranscriptErrors = append(sum.TranscriptErrors, RowError{Line: n, Err: refused})
	}
	_, unread := errors.AsType[*ObservationsReadError](err)
	switch {
	case unread:
		sum.ObservationReadErrors = append(sum.ObservationReadErrors, RowError{Line: n, Err: err})
	case err != nil:
		sum.ObservationErrors = append(sum.ObservationErrors, RowError{Line: n, Err: err})
	case joined:
		sum.ObservationsJoined++
	}
	sum.Attached++
	if first, seen := firstLine[id]; seen {
		sum.RepeatedRows = append(sum.RepeatedRows, RowError{Line: n, Err: fmt.Errorf(
			"rollout %q is attached again (first at line %d): both rows carry its calls, so a sum over the output counts them twice", id, first)})
	} else {
		firstLine[id] = n
	}
	if h, bad := HealthOf(n, &a); bad {
		sum.Rollouts = append(sum.Rollouts, h)
	}
	if opts.Trajectory {
		matched, err := projectTrajectory(&l, opts.Inputs, prior)
		if matched {
			sum.InputsMatched++
		}
		if err != nil {
			sum.TrajectoryErrors = append(sum.TrajectoryErrors, RowError{Line: n, Err: err})
		} else {
			sum.Projected++
		}
	}
	if opts.Tokens != nil {
		if err := finalizeTokens(&sum.Tokens, &l, n, id, opts.Tokens); err != nil {
			return nil, err
		}
	}
	return l.Bytes(), nil
}

// captureSize returns the size of id's capture file in the store [capture.BuildAttachment] reads
// ([capture.StoreForRollout]); 0 when there is none or it is not a regular file. It is only counted
// for progress, so a failing lstat counts 0.
func captureSize(stores []*capture.Store, id string) int64 {
	s := capture.StoreForRollout(stores, id)
	if s == nil {
		return 0
	}
	p, err := s.CapturePath(id)
	if err != nil {
		return 0
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
		return fi.Size()
	}
	return 0
}

// progress decides when Attach calls Options.OnProgress.
type progress struct {
	fn       func(Progress)
	every    int
	interval time.Duration
	start    time.Time
	last     time.Time
	since    int
}

func newProgress(opts Options) *progress {
	now := time.Now()
	return &progress{fn: opts.OnProgress, start: now, last: now,
		every:    cmp.Or(max(opts.ProgressRows, 0), DefaultProgressRows),
		interval: cmp.Or(max(opts.ProgressInterval, 0), DefaultProgressInterval)}
}

// row is called after each written row.
func (p *progress) row(s *Summary, bytesRead int64) {
	if p.fn == nil {
		return
	}
	p.since++
	now := time.Now()
	if p.since < p.every && now.Sub(p.last) < p.interval {
		return
	}
	p.since, p.last = 0, now
	p.fn(Progress{
		Rows: s.Rows, Attached: s.Attached, Unchanged: s.Unchanged, Malformed: s.Malformed,
		Bytes: bytesRead, CaptureBytes: s.CaptureBytes, Elapsed: now.Sub(p.start),
	})
}
