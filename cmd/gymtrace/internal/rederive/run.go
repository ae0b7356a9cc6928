package rederive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/capturedir"
)

// Errors [Run] returns (matched with errors.Is): the output directory is the source directory
// (ErrSameDir), already holds a capture file or marker of a rollout it would write (ErrOutputExists:
// rederive never mixes with an existing capture), or Options.RolloutID has no capture file or marker
// in the source directory (ErrNoCapture).
var (
	ErrSameDir      = errors.New("output directory is the capture directory")
	ErrOutputExists = errors.New("output capture already exists")
	ErrNoCapture    = errors.New("no capture for the rollout")
)

// Options configures [Run]. The zero value rederives every rollout of the source directory.
type Options struct {
	RolloutID string               // when not "", rederive only this rollout
	OnRollout func(RolloutSummary) // when not nil, called after each rollout was written
}

// Summary is what [Run] did.
type Summary struct {
	Rollouts []RolloutSummary // in capturedir.Compare order of their ids
	Records  int              // records read (valid JSON object lines)
	Changed  int              // records written changed
	Skipped  int              // records copied without looking at the response (Result.Skipped)
	Dropped  int              // damaged lines (not a JSON object) that could not be written
}

// RolloutSummary is what [Run] did for one rollout.
type RolloutSummary struct {
	RolloutID string
	Records   int      // records written
	Changes   []Change // the changed records, in file order
	Skipped   int      // records copied without looking at the response
	// Dropped counts damaged lines of the source (not JSON objects): capture.Store writes only
	// records, so they are left out (later call_index values move down) and the output is marked
	// incomplete.
	Dropped    int
	Incomplete bool // the output got the .capture.incomplete marker (the source had it, or Dropped > 0)
}

// Change describes one changed record.
type Change struct {
	Index  int // 0-based index among the source file's non-blank lines (its call_index there)
	Result     // what Line did
}

// Run rederives the captures of src into dst: for each rollout of src (or only Options.RolloutID),
// every record line goes through [Line] and is appended, in order, to dst with capture.Store.Append
// (flock, fsync); the .capture.incomplete marker is carried over. src is only read. The errors above
// come before anything is written. Another error (reading src, appending to dst, e.g. ENOSPC on a
// full disk, ctx being cancelled, checked between records) stops the run at the rollout it happened
// in: that rollout's output files (capture file and marker, which did not exist before, as checked
// above) are removed from dst so that a rerun can write it, and the error says so, or joins the
// removal's own error when that fails too. The rollouts written before it stay in dst, complete; the
// Summary counts only them.
func Run(ctx context.Context, src, dst *capture.Store, opts Options) (Summary, error) {
	var sum Summary
	if same, err := sameDir(src.Dir(), dst.Dir()); err != nil {
		return sum, fmt.Errorf("rederive: %w", err)
	} else if same {
		return sum, fmt.Errorf("rederive: %w: %s", ErrSameDir, dst.Dir())
	}
	entries, err := capturedir.List(src.Dir())
	if err != nil {
		return sum, fmt.Errorf("rederive: %w", err)
	}
	if opts.RolloutID != "" {
		if err := capture.ValidateRolloutID(opts.RolloutID); err != nil {
			return sum, fmt.Errorf("rederive: %w", err)
		}
		entries = slices.DeleteFunc(entries, func(e capturedir.Entry) bool { return e.RolloutID != opts.RolloutID })
		if len(entries) == 0 {
			return sum, fmt.Errorf("rederive: %w %s in %s", ErrNoCapture, opts.RolloutID, src.Dir())
		}
	}
	for _, e := range entries {
		has, err := dst.HasCapture(e.RolloutID)
		if err != nil {
			return sum, fmt.Errorf("rederive: %w", err)
		}
		if has {
			p, _ := dst.CapturePath(e.RolloutID)
			return sum, fmt.Errorf("rederive: %w: %s (or its .capture.incomplete marker); write into a new directory", ErrOutputExists, p)
		}
	}
	for _, e := range entries {
		rs, err := runRollout(ctx, src, dst, e)
		if err != nil {
			return sum, undoRollout(dst, e.RolloutID, len(sum.Rollouts), err)
		}
		sum.Rollouts = append(sum.Rollouts, rs)
		sum.Records += rs.Records
		sum.Changed += len(rs.Changes)
		sum.Skipped += rs.Skipped
		sum.Dropped += rs.Dropped
		if opts.OnRollout != nil {
			opts.OnRollout(rs)
		}
	}
	return sum, nil
}

// runRollout rederives one rollout.
func runRollout(ctx context.Context, src, dst *capture.Store, e capturedir.Entry) (RolloutSummary, error) {
	rs := RolloutSummary{RolloutID: e.RolloutID}
	lines, invalid, err := src.ReadAvailable(e.RolloutID)
	if err != nil {
		return rs, fmt.Errorf("rederive: %w", err)
	}
	rs.Dropped = invalid
	buf := make([]byte, 0, 4096)
	for _, il := range lines {
		if err := ctx.Err(); err != nil {
			return rs, fmt.Errorf("rederive: rollout %s: %w", e.RolloutID, err)
		}
		res, err := Line(il.Line)
		if err != nil { // ReadAvailable returns only JSON objects; keep the line if Line disagrees
			res = Result{Line: il.Line, Skipped: err.Error()}
		}
		if res.Skipped != "" {
			rs.Skipped++
		}
		if res.Changed {
			rs.Changes = append(rs.Changes, Change{Index: il.Index, Result: res})
		}
		buf = append(append(buf[:0], res.Line...), '\n')
		if err := dst.Append(context.WithoutCancel(ctx), e.RolloutID, buf); err != nil {
			return rs, fmt.Errorf("rederive: rollout %s: %w", e.RolloutID, err)
		}
		rs.Records++
	}
	incomplete := e.HasMarker
	if e.HasMarker {
		if incomplete, err = src.IsIncomplete(e.RolloutID); err != nil {
			return rs, fmt.Errorf("rederive: %w", err)
		}
	}
	if incomplete || rs.Dropped > 0 {
		if err := dst.MarkIncomplete(e.RolloutID); err != nil {
			return rs, fmt.Errorf("rederive: rollout %s: %w", e.RolloutID, err)
		}
		rs.Incomplete = true
	}
	return rs, nil
}

// undoRollout removes from dst the output files of rollout id, whose rederive failed with err once
// the written rollouts before it were complete, and returns err saying what was removed and kept.
func undoRollout(dst *capture.Store, id string, written int, err error) error {
	n, cerr := dst.ClearCount(id)
	if cerr != nil {
		return errors.Join(err, fmt.Errorf("rederive: rollout %s: its partial output could not be removed from %s, remove it before a rerun: %w", id, dst.Dir(), cerr))
	}
	what := "nothing of it was written"
	if n > 0 {
		what = fmt.Sprintf("its partial output was removed from %s (%d file%s)", dst.Dir(), n, plural(n))
	}
	if written > 0 {
		what += fmt.Sprintf("; kept the %d rollout%s written before it", written, plural(written))
	}
	return fmt.Errorf("%w; %s", err, what)
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// sameDir reports whether a and b are the same existing directory (b may not exist yet).
func sameDir(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil && os.SameFile(fa, fb), err
}
