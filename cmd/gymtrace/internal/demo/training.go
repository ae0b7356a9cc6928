package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rollouts"
	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/tokens"
)

// TrainingDirName is the training run's directory under Config.Dir; it holds CaptureDirName,
// RolloutsFileName and AttachedFileName of its own.
const TrainingDirName = "training"

// Training is what the demo's training run did (see the package doc, "The training run").
type Training struct {
	Dir          string // Config.Dir/training
	CaptureDir   string // Dir/captures: capture records and token captures (<rollout_id>.tokens.*)
	RolloutsPath string // Dir/rollouts.jsonl
	AttachedPath string // Dir/rollouts.attached.jsonl: attached, projected and token-finalized
	ModelURL     string // base URL the fake vLLM server listened on
	ProxyURL     string // base URL the capture proxy (--token-source vllm) listened on
	Rollouts     []TrainingRollout
	// Tokens is what the finalization of rollouts.Attach reported; Retired counts the captures
	// retired after the attached file was durable (rollouts.Retire, as `gymtrace attach` does).
	Tokens  rollouts.TokenSummary
	Retired int
}

// TrainingRollout is one rollout of the training run: the turns the agent made with what the
// token capture holds for each, and the finalized line's verdict.
type TrainingRollout struct {
	ID           string  // rollout id, e.g. "0-0"
	TaskIndex    int     // _ng_task_index
	RolloutIndex int     // _ng_rollout_index
	Retokenized  bool    // planned: the first turn reasons, so the next prompt re-tokenizes it
	Answer       string  // the last turn's text
	Reward       float64 // 1.0 when Answer holds the right result
	Turns        []TrainingTurn
	// Masked is the finalized line's mask_sample (absent, i.e. false, for a trainable rollout: Gym
	// never writes it as false); Cause says why (rollouts.MaskCause), "" when not masked.
	Masked bool
	Cause  string
	// Capture is the finalized line's _ng_token_capture (the build's metrics and error).
	Capture ojson.Value
	// OutputItems counts the finalized line's response.output items and TokenItems those carrying
	// generation_token_ids (the items the trainer reads).
	OutputItems, TokenItems int
	// Retired tells whether the capture was retired after the attached file was durable (only a
	// trainable rollout's is; a masked one's files stay for inspection).
	Retired bool
}

// TrainingTurn is one model call of a training rollout with its token entry.
type TrainingTurn struct {
	Call Call
	// Entry tells whether the token store holds an entry with the call's model_call_id; Prompt and
	// Generation are its token counts.
	Entry              bool
	Prompt, Generation int
	// Extends is whether the prompt ids start with the previous turn's prompt + generation ids
	// (nil for the first turn, or when either entry is missing): what prefix merging chains on.
	Extends *bool
}

// trainingModelLen is the fake vLLM's context length in tokens (vLLM's --max-model-len).
const trainingModelLen = 8192

// runTraining runs the training run of the package doc into dir: the fake vLLM server and a
// capture proxy with token source vLLM on 127.0.0.1, the stale captures of its rollouts cleared,
// its episodes, the rollouts file, the attach with the projection and the token finalization, and
// the retirement once the attached file is durable. The servers are stopped before it returns.
func runTraining(ctx context.Context, dir string, logger *slog.Logger) (Training, error) {
	tr := Training{Dir: dir, CaptureDir: filepath.Join(dir, CaptureDirName),
		RolloutsPath: filepath.Join(dir, RolloutsFileName), AttachedPath: filepath.Join(dir, AttachedFileName)}
	store, err := capture.NewStore(tr.CaptureDir)
	if err != nil {
		return tr, fmt.Errorf("training: %w", err)
	}
	tokStore, err := tokens.OpenStore(tr.CaptureDir)
	if err != nil {
		return tr, fmt.Errorf("training: %w", err)
	}
	plan := planTraining()
	var bodies bytes.Buffer
	for _, p := range plan {
		bodies.Write(append(p.runBody(), '\n'))
	}
	// The collector's pre-dispatch clear, token captures (tombstones of retired ones) included.
	if _, err := rollouts.Clear(&bodies, []*capture.Store{store}, tokStore); err != nil {
		return tr, fmt.Errorf("training: clear stale captures: %w", err)
	}

	model := fakemodel.New(fakemodel.WithEngine(fakemodel.EngineVLLM), fakemodel.WithMaxModelLen(trainingModelLen),
		fakemodel.WithChunkDelay(chunkDelay))
	st, err := startStack(store, logger, model, proxy.WithTokenSource(proxy.TokenSourceVLLM), proxy.WithTokenDir(tr.CaptureDir))
	if err != nil {
		return tr, fmt.Errorf("training: %w", err)
	}
	tr.ModelURL, tr.ProxyURL = st.modelURL, st.proxyURL
	transport := &http.Transport{ResponseHeaderTimeout: time.Minute, DisableCompression: true}
	client := &http.Client{Transport: transport, Timeout: 2 * time.Minute}
	var runErr error
	for _, p := range plan {
		ep, err := runTrainingEpisode(ctx, client, st.proxyURL, p)
		r := TrainingRollout{ID: ep.id, TaskIndex: p.taskIndex, RolloutIndex: p.rolloutIndex, Retokenized: p.reasonFirst,
			Answer: ep.answer, Reward: p.task.reward(ep.answer)}
		for _, c := range ep.calls {
			r.Turns = append(r.Turns, TrainingTurn{Call: c})
		}
		tr.Rollouts = append(tr.Rollouts, r)
		if err != nil {
			runErr = fmt.Errorf("training: rollout %d-%d: %w", p.taskIndex, p.rolloutIndex, err)
			break
		}
	}
	transport.CloseIdleConnections()
	if err := st.stop(ctx); err != nil || runErr != nil {
		return tr, errors.Join(runErr, err)
	}

	for i := range tr.Rollouts {
		if err := readTurnTokens(tokStore, &tr.Rollouts[i]); err != nil {
			return tr, fmt.Errorf("training: %w", err)
		}
	}
	if err := writeFileAtomic(tr.RolloutsPath, func(w io.Writer) error {
		for _, r := range tr.Rollouts {
			if _, err := w.Write(trainingLine(r)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return tr, fmt.Errorf("training: %w", err)
	}
	if err := finalizeTraining(ctx, &tr, store, tokStore); err != nil {
		return tr, fmt.Errorf("training: %w", err)
	}
	return tr, nil
}

// readTurnTokens fills r's turns from the token store (read only: tokens.Store.Inspect), matching
// entries to calls by model_call_id.
func readTurnTokens(store *tokens.Store, r *TrainingRollout) error {
	in, err := store.Inspect(r.ID)
	if err != nil {
		return fmt.Errorf("read token capture of %s: %w", r.ID, err)
	}
	if in.EntriesErr != nil {
		return fmt.Errorf("read token capture of %s: %w", r.ID, in.EntriesErr)
	}
	var prev *tokens.TokenEntry
	for i := range r.Turns {
		t := &r.Turns[i]
		k := slices.IndexFunc(in.Entries, func(e tokens.TokenEntry) bool { return e.ModelCallID == t.Call.ModelCallID })
		if k < 0 || t.Call.ModelCallID == "" {
			prev = nil
			continue
		}
		e := &in.Entries[k]
		t.Entry, t.Prompt, t.Generation = true, len(e.PromptTokenIDs), len(e.GenerationTokenIDs)
		if prev != nil {
			want := slices.Concat(prev.PromptTokenIDs, prev.GenerationTokenIDs)
			ext := len(e.PromptTokenIDs) >= len(want) && slices.Equal(e.PromptTokenIDs[:len(want)], want)
			t.Extends = &ext
		}
		prev = e
	}
	return nil
}

// trainingLine is one finished training rollout as the collector writes it: the identity keys, the
// prompt, the agent's Responses-shaped "response" (its final answer as one output message, which
// the finalization replaces with the token-carrying output) and the reward.
func trainingLine(r TrainingRollout) []byte {
	line := ojson.Object(
		ojson.Member{Key: "_ng_task_index", Value: ojson.Int(int64(r.TaskIndex))},
		ojson.Member{Key: "_ng_rollout_index", Value: ojson.Int(int64(r.RolloutIndex))},
		ojson.Member{Key: "prompt", Value: ojson.String(newTask(r.TaskIndex).prompt)},
		ojson.Member{Key: "response", Value: ojson.Object(
			ojson.Member{Key: "object", Value: ojson.String("response")},
			ojson.Member{Key: "model", Value: ojson.String(chatModel)},
			ojson.Member{Key: "output", Value: ojson.Array(ojson.Object(
				ojson.Member{Key: "type", Value: ojson.String("message")},
				ojson.Member{Key: "role", Value: ojson.String("assistant")},
				ojson.Member{Key: "content", Value: ojson.Array(ojson.Object(
					ojson.Member{Key: "type", Value: ojson.String("output_text")},
					ojson.Member{Key: "text", Value: ojson.String(r.Answer)},
				))},
			))},
		)},
		ojson.Member{Key: "reward", Value: ojson.Float(r.Reward)},
	)
	return append(line.AppendJSON(nil), '\n')
}

// finalizeTraining attaches the training rollouts file into the attached file as `gymtrace attach`
// does (rollouts.Attach with the projection and the token finalization; the output written beside
// its name, fsynced and renamed), then retires the well-built captures (rollouts.Retire) and reads
// each line's verdict back.
func finalizeTraining(ctx context.Context, tr *Training, store *capture.Store, tokStore *tokens.Store) error {
	src, err := os.Open(tr.RolloutsPath)
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	defer func() { _ = src.Close() }()
	opts := rollouts.Options{Trajectory: true, Tokens: &rollouts.TokenOptions{Store: tokStore}}
	var sum rollouts.Summary
	if err := writeFileAtomic(tr.AttachedPath, func(w io.Writer) error {
		var aerr error
		sum, aerr = rollouts.Attach(ctx, src, w, []*capture.Store{store}, opts)
		return aerr
	}); err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	tr.Tokens = sum.Tokens
	var warnings []string
	tr.Retired, warnings = rollouts.Retire(tokStore, sum.Tokens.Retirable)
	if len(warnings) > 0 {
		return fmt.Errorf("retire: %s", warnings[0])
	}
	b, err := os.ReadFile(tr.AttachedPath)
	if err != nil {
		return fmt.Errorf("read %s: %w", tr.AttachedPath, err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i := range tr.Rollouts {
		r := &tr.Rollouts[i]
		if i >= len(lines) {
			return fmt.Errorf("%s: no line for rollout %s", tr.AttachedPath, r.ID)
		}
		line, err := ojson.Parse(bytes.TrimSuffix(lines[i], []byte("\n")))
		if err != nil {
			return fmt.Errorf("%s line %d: %w", tr.AttachedPath, i+1, err)
		}
		readVerdict(line, r)
		for _, m := range tr.Tokens.Masked {
			if m.RolloutID == r.ID {
				r.Cause = m.Cause
			}
		}
		for _, x := range sum.Tokens.Retirable {
			r.Retired = r.Retired || x.RolloutID == r.ID
		}
	}
	if tr.Retired != len(sum.Tokens.Retirable) {
		return fmt.Errorf("retire: %d of %d well-built captures retired", tr.Retired, len(sum.Tokens.Retirable))
	}
	return nil
}

// readVerdict reads a finalized line's mask_sample, _ng_token_capture and response.output into r.
func readVerdict(line ojson.Value, r *TrainingRollout) {
	mask, _ := line.Get(tokens.MaskSampleKey)
	r.Masked, _ = mask.AsBool()
	r.Capture, _ = line.Get(tokens.TokenCaptureKey)
	resp, _ := line.Get("response")
	out, _ := resp.Get("output")
	r.OutputItems = len(out.Elems())
	for _, it := range out.Elems() {
		if g, ok := it.Get("generation_token_ids"); ok && len(g.Elems()) > 0 {
			r.TokenItems++
		}
	}
}
