package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/codes"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
)

// Defaults of the flags.
const (
	defaultModel = "gpt-4.1-mini"
	defaultTask  = "Run the workload memory=64MiB cpu=0.5s in the sandbox and report what it measured."
	// shutdownTimeout bounds flushing the spans at exit.
	shutdownTimeout = 30 * time.Second
)

// errUsage marks a command-line error (exit status 2).
var errUsage = errors.New("usage")

func main() {
	if len(os.Args) > 1 && os.Args[1] == workloadCommand {
		if err := runWorkload(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// config is the agent's command line.
type config struct {
	baseURL           string
	ident             identity // the dispatched row's identity keys
	runBody           []byte   // ident as the run request's JSON body (SPEC §1.2)
	rolloutID         string   // from runBody by Gym's rule (SPEC §1.2)
	captureDir        string
	otlpEndpoint      string
	model             string
	task              string
	apiKey            string
	bundleOut         string
	embedObservations bool
	toolTimeout       time.Duration
	toolMemoryLimit   int64
	callTimeout       time.Duration
}

// parseFlags reads the command line. Errors wrap errUsage.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.baseURL, "base-url", "", "base URL of the gymtrace capture proxy, e.g. http://127.0.0.1:8000 (required); "+
		"the agent calls <base-url>/ng-rollout/<rollout-id>/v1/chat/completions")
	fs.IntVar(&cfg.ident.TaskIndex, "task-index", 0, "_ng_task_index of the dispatched row (>= 0); the rollout id is <task-index>-<rollout-index> unless --rollout-id names one")
	fs.IntVar(&cfg.ident.RolloutIndex, "rollout-index", 0, "_ng_rollout_index of the dispatched row (>= 0)")
	fs.StringVar(&cfg.ident.ID, "rollout-id", "", "explicit rollout id (_ng_rollout_id; ^[A-Za-z0-9][A-Za-z0-9._-]*$, at most 200 bytes; default: derived from the indices)")
	fs.StringVar(&cfg.captureDir, "capture-dir", "", "the proxy's capture directory: <rollout-id>.observations.jsonl is written there (default: no observations file)")
	fs.StringVar(&cfg.otlpEndpoint, "otlp-endpoint", "", "OTLP/HTTP base URL to export the agent's spans to, e.g. http://127.0.0.1:4318 (default: no export)")
	fs.StringVar(&cfg.model, "model", defaultModel, "model to ask for")
	fs.StringVar(&cfg.task, "task", defaultTask, "the user's task; the tool runs the workload it names (memory=<n>MiB cpu=<seconds>s)")
	fs.StringVar(&cfg.apiKey, "api-key", os.Getenv("OPENAI_API_KEY"), "API key sent to the proxy, which forwards it upstream (default $OPENAI_API_KEY)")
	fs.StringVar(&cfg.bundleOut, "bundle-out", "", "write the rollout's ng_agent_observations bundle (JSON) to this file (default: not written)")
	fs.BoolVar(&cfg.embedObservations, "embed-observations", false, "put the bundle into the rollout line as ng_agent_observations "+
		"(default: the line has none and `gymtrace attach` reads the observations file)")
	fs.DurationVar(&cfg.toolTimeout, "tool-timeout", 2*time.Minute, "kill a sandboxed tool run after this long")
	fs.Int64Var(&cfg.toolMemoryLimit, "tool-memory-limit-mib", 1024, "kill a sandboxed tool run whose resident memory goes over this many MiB (0: no limit)")
	fs.DurationVar(&cfg.callTimeout, "call-timeout", 2*time.Minute, "bound of one model call")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, fmt.Errorf("%w: %w", errUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case cfg.baseURL == "":
		return cfg, fmt.Errorf("%w: --base-url is required", errUsage)
	case cfg.ident.TaskIndex < 0:
		return cfg, fmt.Errorf("%w: --task-index %d: must be >= 0", errUsage, cfg.ident.TaskIndex)
	case cfg.ident.RolloutIndex < 0:
		return cfg, fmt.Errorf("%w: --rollout-index %d: must be >= 0", errUsage, cfg.ident.RolloutIndex)
	case cfg.toolMemoryLimit < 0:
		return cfg, fmt.Errorf("%w: --tool-memory-limit-mib %d: must be >= 0", errUsage, cfg.toolMemoryLimit)
	}
	if cfg.ident.ID != "" {
		if err := rollout.ValidateID(cfg.ident.ID); err != nil {
			return cfg, fmt.Errorf("%w: --rollout-id: %w", errUsage, err)
		}
	}
	var err error
	if cfg.runBody, err = json.Marshal(cfg.ident); err != nil {
		return cfg, fmt.Errorf("run body: %w", err)
	}
	id, _, err := rollout.IDFromRunBody(cfg.runBody)
	if err != nil {
		return cfg, fmt.Errorf("%w: %w", errUsage, err)
	}
	cfg.rolloutID = id
	if cfg.apiKey == "" {
		cfg.apiKey = "sk-gymtrace-example-agent" // the fake model server checks none
	}
	return cfg, nil
}

// run is the agent's command: one rollout through the capture proxy, its rollout line on stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable (the tool's sandbox runs it): %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	tel, err := newTelemetry(ctx, cfg.captureDir, cfg.otlpEndpoint)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		err = errors.Join(err, tel.shutdown(sctx))
	}()
	rec, err := agentobs.NewRecorder(tel.tp, cfg.rolloutID)
	if err != nil {
		return err
	}

	// The rollout's base URL: the proxy's, with the /ng-rollout/<id> prefix that names the rollout
	// of every call (SPEC §1.3-§1.4).
	base, err := rollout.BaseURLForRun(cfg.baseURL, cfg.runBody)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	// The HTTP client of the model client: agentobs.Transport records each answer's model_call_id
	// header for the invocation in the request's context; proxy.NewHTTPClient around it makes every
	// request a client span sending traceparent, so the proxy's model-call spans nest under it.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	hc, err := proxy.NewHTTPClient(&http.Client{Transport: agentobs.Transport(tr), Timeout: cfg.callTimeout},
		proxy.WithClientTracerProvider(tel.tp))
	if err != nil {
		return err
	}
	agent := &Agent{
		Client: openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithHTTPClient(hc), option.WithAPIKey(cfg.apiKey)),
		Model:  cfg.model,
		Sandbox: Sandbox{
			Executable: exe, ID: "local-" + cfg.rolloutID,
			Timeout: cfg.toolTimeout, MemoryLimitBytes: cfg.toolMemoryLimit << 20,
		},
		Logger: logger,
	}

	rctx, root := proxy.StartRollout(ctx, tel.tp, cfg.rolloutID)
	res, runErr := agent.Run(rctx, rec, cfg.task)
	if runErr != nil {
		root.SetStatus(codes.Error, runErr.Error())
	}
	root.End()

	bundle := rec.Bundle()
	if cfg.bundleOut != "" {
		if err := writeBundle(cfg.bundleOut, bundle); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		return fmt.Errorf("rollout %s: %w", cfg.rolloutID, runErr)
	}
	var embedded *agentobs.AgentObservationBundle
	if cfg.embedObservations {
		embedded = &bundle
	}
	line, err := rolloutLine(cfg.ident, cfg.task, res.Answer, embedded)
	if err != nil {
		return err
	}
	if _, err := stdout.Write(line); err != nil {
		return fmt.Errorf("write rollout line: %w", err)
	}
	logger.Info("rollout done", "rollout_id", cfg.rolloutID, "model_calls", len(res.ModelCalls), "tool_calls", res.ToolCalls)
	return nil
}
