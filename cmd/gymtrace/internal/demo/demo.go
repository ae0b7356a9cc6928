package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rollouts"
	"github.com/gymtrace/gymtrace/proxy"
)

// Limits and defaults of Config.Rollouts.
const (
	DefaultRollouts = 3
	MaxRollouts     = 1000
)

// maxWorkers bounds the rollouts that run at the same time.
const maxWorkers = 8

// Config configures Run.
type Config struct {
	// Dir is the directory that receives the demo's files (see the package doc). It must be an
	// absolute path (SPEC §7: capture directories are absolute); it is created if missing. Empty
	// means a new directory under os.TempDir() named gymtrace-demo-*, which is kept.
	Dir string
	// Rollouts is the number of rollouts to run, 1 to MaxRollouts; 0 means DefaultRollouts (3).
	Rollouts int
	// Out receives the report (addresses, files, summary table, hints); nil discards it.
	Out io.Writer
	// Err receives warnings of the proxy and servers; nil discards them.
	Err io.Writer
}

// Result is what Run did. The servers it names are stopped by the time Run returns.
type Result struct {
	Dir          string // the demo directory (absolute)
	CaptureDir   string // Dir/captures: the capture files
	RolloutsPath string // Dir/rollouts.jsonl
	AttachedPath string // Dir/rollouts.attached.jsonl
	ModelURL     string // base URL the fake model server listened on
	ProxyURL     string // base URL the capture proxy listened on
	Rollouts     []Rollout
	// Attach is what rollouts.Attach reported for the attached file.
	Attach rollouts.Summary
	// Observations is what the agent's observation processor counted (observation spans appended
	// to the <rollout_id>.observations.jsonl files, spans lost).
	Observations ObservationCounts
	// Elapsed is the time from the servers' start to the end of the last rollout.
	Elapsed time.Duration
	// Training is the training run (Dir/training): token capture through the proxy against the
	// fake vLLM server, finalized as `gymtrace attach` finalizes it.
	Training Training
}

// Rollout is one rollout of the demo: its identity, what the agent did and saw, and what the
// capture file holds for it.
type Rollout struct {
	ID           string  // rollout id (SPEC §1.2), e.g. "0-1"
	TaskIndex    int     // _ng_task_index
	RolloutIndex int     // _ng_rollout_index
	Dialect      string  // the dialect of every call of the rollout
	Prompt       string  // the task's user message
	Answer       string  // the model's final answer
	Reward       float64 // 1.0 when Answer holds the right result, else 0.0
	Calls        []Call  // the model calls as the agent saw them, in order
	Capture      CaptureSummary
	// Observations summarizes the attached line's ng_agent_observations: the agent's observations
	// joined with the captured calls.
	Observations ObservationSummary
}

// checkConfig validates cfg and fills in defaults.
func checkConfig(cfg *Config) error {
	if cfg.Rollouts == 0 {
		cfg.Rollouts = DefaultRollouts
	}
	if cfg.Rollouts < 1 || cfg.Rollouts > MaxRollouts {
		return fmt.Errorf("demo: rollouts %d: must be between 1 and %d", cfg.Rollouts, MaxRollouts)
	}
	if cfg.Dir != "" && !filepath.IsAbs(cfg.Dir) {
		return fmt.Errorf("demo: dir %q: must be an absolute path", cfg.Dir)
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Err == nil {
		cfg.Err = io.Discard
	}
	return nil
}

// prepareDir creates the demo directory (a new temporary one when dir is empty) and returns its
// absolute, cleaned path.
func prepareDir(dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "gymtrace-demo-")
		if err != nil {
			return "", fmt.Errorf("demo: create temporary directory: %w", err)
		}
		return filepath.Abs(d)
	}
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("demo: create %s: %w", dir, err)
	}
	return dir, nil
}

// Run runs the demo described in the package doc: it starts the fake model server and the capture
// proxy on 127.0.0.1, clears the captures an earlier demo left in its directory, runs
// cfg.Rollouts episodes of the agent through the proxy (up to 8 at a time), stops the servers,
// writes rollouts.jsonl, attaches the captures into rollouts.attached.jsonl, reads the capture files
// back, runs the training run into Dir/training (see the package doc) and prints the report to
// cfg.Out.
//
// Errors: an invalid cfg (rollouts outside 1..MaxRollouts, a relative Dir) is reported before
// anything starts; a failed episode (a model call that did not answer 200 or an answer the agent
// could not read), a file or capture read failure, or ctx being cancelled stop the demo with an
// error naming the rollout or file. The servers are stopped in every case, and the Result holds what
// was done so far (at least its paths once the directory exists).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := checkConfig(&cfg); err != nil {
		return Result{}, err
	}
	dir, err := prepareDir(cfg.Dir)
	if err != nil {
		return Result{}, err
	}
	res := Result{
		Dir:          dir,
		CaptureDir:   filepath.Join(dir, CaptureDirName),
		RolloutsPath: filepath.Join(dir, RolloutsFileName),
		AttachedPath: filepath.Join(dir, AttachedFileName),
	}
	store, err := capture.NewStore(res.CaptureDir)
	if err != nil {
		return res, fmt.Errorf("demo: %w", err)
	}
	plan := planRollouts(cfg.Rollouts)
	// Every rollout a demo can run, not only this run's: a rerun with fewer rollouts leaves no
	// earlier run's captures behind for report and attach to find.
	if err := clearStale(planRollouts(MaxRollouts), store); err != nil {
		return res, fmt.Errorf("demo: %w", err)
	}

	logger := slog.New(slog.NewTextHandler(cfg.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := startStack(store, logger, newModelServer())
	if err != nil {
		return res, fmt.Errorf("demo: %w", err)
	}
	res.ModelURL, res.ProxyURL = st.modelURL, st.proxyURL
	if _, err := fmt.Fprintf(cfg.Out, "gymtrace demo: fake model server on %s, capture proxy on %s (model server %q)\n",
		st.modelURL, st.proxyURL, ModelServerName); err != nil {
		return res, errors.Join(fmt.Errorf("demo: write report: %w", err), st.stop(ctx))
	}

	tel, err := newTelemetry(store)
	if err != nil {
		return res, errors.Join(fmt.Errorf("demo: %w", err), st.stop(ctx))
	}
	start := time.Now()
	rs, runErr := runAll(ctx, st.proxyURL, tel.tp, plan)
	res.Elapsed, res.Rollouts = time.Since(start), rs
	var telErr error
	res.Observations, telErr = tel.shutdown(ctx)
	if err := st.stop(ctx); err != nil || runErr != nil || telErr != nil {
		return res, errors.Join(runErr, telErr, err)
	}

	for i := range res.Rollouts {
		r := &res.Rollouts[i]
		if r.Capture, err = readCaptureSummary(store, r.ID); err != nil {
			return res, fmt.Errorf("demo: %w", err)
		}
	}
	if err := writeRollouts(res.RolloutsPath, res.Rollouts); err != nil {
		return res, fmt.Errorf("demo: %w", err)
	}
	if res.Attach, err = attachCaptures(ctx, res.RolloutsPath, res.AttachedPath, store); err != nil {
		return res, fmt.Errorf("demo: %w", err)
	}
	if err := readObservationSummaries(res.AttachedPath, store, res.Rollouts); err != nil {
		return res, fmt.Errorf("demo: %w", err)
	}
	if res.Training, err = runTraining(ctx, filepath.Join(dir, TrainingDirName), logger); err != nil {
		return res, fmt.Errorf("demo: %w", err)
	}

	calls := 0
	for _, r := range res.Rollouts {
		calls += len(r.Calls)
	}
	if _, err := fmt.Fprintf(cfg.Out, "gymtrace demo: %d rollout(s), %d model call(s) through the proxy in %s; %d rollout line(s) attached\n",
		len(res.Rollouts), calls, res.Elapsed.Round(time.Millisecond), res.Attach.Attached); err != nil {
		return res, fmt.Errorf("demo: write report: %w", err)
	}
	if err := printReport(cfg.Out, &res); err != nil {
		return res, fmt.Errorf("demo: write report: %w", err)
	}
	if err := printTraining(cfg.Out, &res.Training); err != nil {
		return res, fmt.Errorf("demo: write report: %w", err)
	}
	return res, nil
}

// runAll runs the planned rollouts against the proxy, at most maxWorkers at a time, recording each
// agent's observations with tp, and returns them in plan order. The first failure cancels the
// rollouts still running; every goroutine has returned when runAll does, and the agent's idle
// connections are closed.
//
// The agent's HTTP client is proxy.NewHTTPClient (a client span and traceparent per call) around
// agentobs.Transport (each answer's model_call_id header recorded for the invocation or compaction
// in the request's context).
func runAll(ctx context.Context, proxyURL string, tp trace.TracerProvider, plan []plannedRollout) ([]Rollout, error) {
	transport := &http.Transport{
		MaxIdleConnsPerHost:   maxWorkers,
		ResponseHeaderTimeout: time.Minute,
		DisableCompression:    true, // the agent reads the bytes the model server sent
	}
	defer transport.CloseIdleConnections()
	client, err := proxy.NewHTTPClient(&http.Client{Transport: agentobs.Transport(transport), Timeout: 2 * time.Minute},
		proxy.WithClientTracerProvider(tp))
	if err != nil {
		return nil, fmt.Errorf("demo: agent http client: %w", err)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := make([]Rollout, len(plan))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range min(maxWorkers, len(plan)) {
		wg.Go(func() {
			for k := range jobs {
				p := plan[k]
				ep, err := runEpisode(ctx, client, tp, proxyURL, p)
				out[k] = Rollout{
					ID: ep.id, TaskIndex: p.taskIndex, RolloutIndex: p.rolloutIndex, Dialect: p.dialect,
					Prompt: p.task.prompt, Answer: ep.answer, Reward: p.task.reward(ep.answer), Calls: ep.calls,
				}
				if err != nil {
					once.Do(func() {
						firstErr = fmt.Errorf("demo: rollout %d-%d: %w", p.taskIndex, p.rolloutIndex, err)
						cancel(firstErr)
					})
				}
			}
		})
	}
feed:
	for k := range plan {
		select {
		case jobs <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return out, firstErr
	}
	if err := context.Cause(ctx); err != nil {
		return out, fmt.Errorf("demo: %w", err)
	}
	return out, nil
}
