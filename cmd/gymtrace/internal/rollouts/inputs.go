package rollouts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/rollout"
)

// taskKeys are the keys of a dispatched input row the trajectory's task_id is read from (SPEC §5.6
// "Identity"), in the order they are tried.
var taskKeys = []string{"task_id", "problem_id", "instance_id"}

// InputRows are the task keys of a run's dispatched input rows (e.g. Gym's
// <stem>_materialized_inputs.jsonl), indexed by (_ng_task_index, _ng_rollout_index), the rollout
// identity Gym's collector copies from the row onto its result (SPEC §5.5 step 1). The projection
// takes the trajectory's task_id from the row (SPEC §5.6; a result need not echo task_id,
// problem_id or instance_id). Only the task keys are kept, so a large inputs file costs little
// memory. Safe for concurrent reads once built.
type InputRows struct {
	rows map[[2]string]ojson.Value
}

// Len returns the number of indexed input rows.
func (r *InputRows) Len() int { return len(r.rows) }

// ReadInputRows reads a JSONL file of input rows. A row without _ng_task_index or
// _ng_rollout_index (absent or null) is not indexed; when two rows share an index pair the first
// is kept. A line that is not a JSON object is an error naming its line number; ctx is checked
// between lines.
func ReadInputRows(ctx context.Context, in io.Reader) (*InputRows, error) {
	r := &InputRows{rows: map[[2]string]ojson.Value{}}
	lr := newLineReader(in)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("input rows: after %d lines: %w", lr.line, err)
		}
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			return r, nil
		}
		if err != nil {
			return nil, fmt.Errorf("input rows: read line %d: %w", lr.line+1, err)
		}
		if isBlank(line) {
			continue
		}
		l, err := rolloutline.Parse(line)
		if err != nil {
			return nil, fmt.Errorf("input rows: line %d: not a JSON object (line starts %q): %w", lr.line, excerpt(line), err)
		}
		key, ok := indexKey(&l)
		if _, seen := r.rows[key]; !ok || seen {
			continue
		}
		r.rows[key] = pick(&l, taskKeys)
	}
}

// ReadInputRowsFile is [ReadInputRows] over the file at path.
func ReadInputRowsFile(ctx context.Context, path string) (*InputRows, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadInputRows(ctx, f)
}

// lookup returns the task keys of the input row with l's index pair.
func (r *InputRows) lookup(l *rolloutline.Line) (ojson.Value, bool) {
	if r == nil {
		return ojson.Value{}, false
	}
	key, ok := indexKey(l)
	if !ok {
		return ojson.Value{}, false
	}
	v, found := r.rows[key]
	return v, found
}

// indexKey is Python's str() of l's _ng_task_index and _ng_rollout_index; ok is false when either
// is absent or null.
func indexKey(l *rolloutline.Line) (key [2]string, ok bool) {
	for i, k := range []string{rollout.TaskIndexKey, rollout.IndexKey} {
		raw, present := l.Get(k)
		if !present {
			return key, false
		}
		v, err := python.LoadsNonFinite(raw) // 1e400 is inf to json.loads, as in the rollout id
		if err != nil || v.IsNull() {
			return key, false
		}
		key[i] = python.Str(v)
	}
	return key, true
}

// pick returns the members of l named keys, as an object in the order of keys. A value outside the
// strict parser's ranges (an integer beyond 64 bits, NaN, a float beyond float64 such as 1e400,
// whose text is kept: ±inf to json.loads) is read as Python's json.loads reads it, as Gym's collector does (from
// new-user trials: a 23-digit _ng_task_index was left out, and the projection failed with a
// KeyError naming a key the row has; a task index of 1e400 made ng_trajectory's ids "None"); a
// value with ill-formed UTF-8 (which rolloutline keeps, and Gym's bytes decode refuses) is left
// out.
func pick(l *rolloutline.Line, keys []string) ojson.Value {
	var ms []ojson.Member
	for _, k := range keys {
		raw, ok := l.Get(k)
		if !ok {
			continue
		}
		v, err := ojson.Parse(raw)
		if err != nil && utf8.Valid(raw) {
			v, err = python.Loads(raw)
			if t := bytes.TrimSpace(raw); err == nil && v.IsNull() && !bytes.Equal(t, []byte("null")) {
				v = ojson.Number(string(t)) // a float beyond float64 keeps its text (inf to json.loads)
			}
		}
		if err == nil {
			ms = append(ms, ojson.Member{Key: k, Value: v})
		}
	}
	return ojson.Object(ms...)
}
