package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/atomicfile"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rollouts"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/rollout"
)

// File and directory names under Config.Dir.
const (
	CaptureDirName   = "captures"
	RolloutsFileName = "rollouts.jsonl"
	AttachedFileName = "rollouts.attached.jsonl"
)

// runBodiesJSONL returns the run bodies of plan as JSONL, one {"_ng_task_index": t,
// "_ng_rollout_index": r} object per line: the rows about to be dispatched.
func runBodiesJSONL(plan []plannedRollout) []byte {
	var b bytes.Buffer
	for _, p := range plan {
		fmt.Fprintf(&b, "{%q:%d,%q:%d}\n", rollout.TaskIndexKey, p.taskIndex, rollout.IndexKey, p.rolloutIndex)
	}
	return b.Bytes()
}

// clearStale removes the captures of the rollouts of plan (SPEC §2.6, the collector's pre-dispatch
// clear; Run passes every rollout a demo can run), so a second demo in the same directory neither
// appends to the first one's captures nor leaves the rollouts it does not run.
func clearStale(plan []plannedRollout, store *capture.Store) error {
	if _, err := rollouts.Clear(bytes.NewReader(runBodiesJSONL(plan)), []*capture.Store{store}); err != nil {
		return fmt.Errorf("clear stale captures: %w", err)
	}
	return nil
}

// rolloutLine is one finished rollout as the collector writes it: the run body's identity keys,
// the prompt, the final answer as "response" and the reward.
func rolloutLine(r Rollout) ([]byte, error) {
	prompt, err := json.Marshal(r.Prompt)
	if err != nil {
		return nil, err
	}
	answer, err := json.Marshal(r.Answer)
	if err != nil {
		return nil, err
	}
	line := fmt.Sprintf("{%q:%d,%q:%d,\"prompt\":%s,\"response\":%s,\"reward\":%s}\n",
		rollout.TaskIndexKey, r.TaskIndex, rollout.IndexKey, r.RolloutIndex, prompt, answer, ojson.AppendFloat(nil, r.Reward))
	return []byte(line), nil
}

// writeFileAtomic writes path through fill: into a new file beside it, synced, then renamed over
// path, so path holds either its old content or the whole new one.
func writeFileAtomic(path string, fill func(io.Writer) error) error {
	return atomicfile.Write(path, path, 0o600, func(w io.Writer) error {
		if err := fill(w); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	})
}

// writeRollouts writes one line per rollout to path.
func writeRollouts(path string, rs []Rollout) error {
	return writeFileAtomic(path, func(w io.Writer) error {
		for _, r := range rs {
			line, err := rolloutLine(r)
			if err != nil {
				return fmt.Errorf("rollout %s: %w", r.ID, err)
			}
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
		return nil
	})
}

// attachCaptures runs rollouts.Attach from the rollouts file in to the attached file out, with the
// ng_trajectory projection on as `gymtrace attach` runs it (SPEC §5.5 step 3).
func attachCaptures(ctx context.Context, in, out string, store *capture.Store) (rollouts.Summary, error) {
	src, err := os.Open(in)
	if err != nil {
		return rollouts.Summary{}, fmt.Errorf("attach: %w", err)
	}
	defer func() { _ = src.Close() }()
	var sum rollouts.Summary
	err = writeFileAtomic(out, func(w io.Writer) error {
		var aerr error
		sum, aerr = rollouts.Attach(ctx, src, w, []*capture.Store{store}, rollouts.Options{Trajectory: true})
		return aerr
	})
	if err != nil {
		return sum, fmt.Errorf("attach: %w", err)
	}
	return sum, nil
}
