package rollouts

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// RowID is one row of a rollouts file that carries a rollout identity.
type RowID struct {
	Line      int    // 1-based input line number
	RolloutID string // the id SPEC §1.2 derives from the row
}

// ReadIDs reads a rollouts JSONL file as [Attach] does and returns, in input order, the rollout id
// of every row that carries one; a row that cannot be read is returned in rowErrs and reading goes
// on. err reports only a read failure or ctx being cancelled (checked between rows); ids and
// rowErrs then hold what was read so far.
func ReadIDs(ctx context.Context, in io.Reader) (ids []RowID, rowErrs []RowError, err error) {
	return readIDs(ctx, in, "rollouts ids")
}

// readIDs is ReadIDs with the prefix of its error messages.
func readIDs(ctx context.Context, in io.Reader, prefix string) (ids []RowID, rowErrs []RowError, err error) {
	lr := newLineReader(in)
	for {
		if err := ctx.Err(); err != nil {
			return ids, rowErrs, fmt.Errorf("%s: after %d lines: %w", prefix, lr.line, err)
		}
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			return ids, rowErrs, nil
		}
		if err != nil {
			return ids, rowErrs, fmt.Errorf("%s: read line %d: %w", prefix, lr.line+1, err)
		}
		if isBlank(line) {
			continue
		}
		_, id, ok, err := parseRow(line)
		switch {
		case err != nil:
			rowErrs = append(rowErrs, RowError{Line: lr.line, Err: err})
		case ok:
			ids = append(ids, RowID{Line: lr.line, RolloutID: id})
		}
	}
}
