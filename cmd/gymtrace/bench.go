package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/bench"
)

func init() { commands = append(commands, newBenchCmd, newBenchPlainProxyCmd) }

// newBenchCmd builds `gymtrace bench` (issue 6): capture overhead measured side by side.
func newBenchCmd() *cobra.Command {
	var (
		workloads  []string
		conc       []int
		duration   time.Duration
		asJSON     bool
		captureExe string
	)
	cmd := &cobra.Command{
		Use:   "bench [--workload small|json20k|sse200|sse1m|tokens-small|tokens-sse200|tokens|all] [--concurrency 1,32,256] [--duration 20s] [--json]",
		Short: "Measure what capture costs: the same load direct, through a plain reverse proxy and through gymtrace proxy",
		Long: `Measure capture overhead on this machine. An in-process model server on 127.0.0.1 answers the
same OpenAI Chat Completions workload (a) directly, (b) through a plain net/http/httputil.ReverseProxy
without capture, (c) through the real gymtrace proxy writing durable capture files (--durability
per-record) and (d) the same with --durability journal (capture-journal); the proxies run as child
processes so that their CPU time and peak RSS are measured apart. For each workload and
concurrency the table shows calls/s, p50/p99 latency, time to first byte (streams), proxy CPU per call,
peak RSS, the store's fsyncs per record and the median flush its calls waited on (flush p50), the
latency added over direct calls, and the throughput ratios over plain (c/b) and over direct (c/a)
of each capture row (on the capture-journal row these are journal/plain, d/b, and d/a). The header
gives the fsync latency measured in the capture directory, back to back and after 1 ms idle each
(what a lone call pays: on a virtual machine the idle disk and CPUs add their wake-up); for each
concurrency-1 cell a line sets the journal's added p50 against plain's + one fsync + 0.15 ms, with
both of the header's fsyncs and with the flush the calls waited on.

Workloads: small (short JSON answer), json20k (20 KiB JSON answer), sse200 (200 SSE events 5 ms
apart); "all" runs these three. sse1m (a 1 MiB stream, events back to back) runs only when named:
it is the memory check, printing the capture proxy's peak RSS against 2.5 × the bytes of the
streams in flight + 64 MiB (run it with --concurrency 256).

Token capture (run only when named; "tokens" names both): tokens-small and tokens-sse200 are a
short answer and a 200-event stream (5 ms apart) of the fake vLLM engine (each distinct request
rendered once, then replayed), called under
/ng-rollout/bench-<worker>-<k>/training-token-capture/v1 (8 calls per rollout), with both capture
targets started with --token-source vllm: each captured call gets the token members injected,
its intent and token entry written and vLLM's answer to the client's own request restored (the
load generator checks that every target returns exactly those bytes).

--duration is the total time spent starting calls, shared among the cells; calls in flight
when a cell ends complete, so the run takes longer (an sse200 call lasts about a second), and a
target that completes no call within its cell fails the run (raise --duration). Temporary capture files go under
$TMPDIR and are removed: set TMPDIR to measure on the disk that will hold the captures.

After each capture cell the capture files are read back (tolerant read): every answered call must
have exactly one record (and, for a token workload, one token entry, no intent without its entry
and no incomplete rollout). A mismatch or a failed call exits 1. The last line is always
"capture/plain throughput ratio: R", R being the small-call ratio at concurrency 32 (or the
closest cell run). With --json the report is one JSON object instead (capture_plain_throughput_ratio).`,
		Args: noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			wls, err := bench.LookupWorkloads(workloads)
			if err != nil {
				return usageErrorf("--workload: %v", strings.TrimPrefix(err.Error(), "bench: "))
			}
			for _, n := range conc {
				if n < 1 || n > bench.MaxConcurrency {
					return usageErrorf("--concurrency %d must be between 1 and %d", n, bench.MaxConcurrency)
				}
			}
			if len(conc) == 0 {
				return usageErrorf("--concurrency needs at least one level")
			}
			if duration <= 0 {
				return usageErrorf("--duration %v must be positive", duration)
			}
			cfg := bench.Config{
				Workloads: wls, Concurrency: conc, Duration: duration,
				Progress: cmd.ErrOrStderr(),
			}
			if captureExe != "" {
				self, err := os.Executable()
				if err != nil {
					return fmt.Errorf("bench: find the gymtrace executable: %w", err)
				}
				plain, capt := bench.GymtraceCommand(self), bench.GymtraceCommand(captureExe)
				cfg.Command = func(ctx context.Context, target, upstream, dir, tokenSource string) (*exec.Cmd, error) {
					if target == bench.TargetCapture || target == bench.TargetJournal {
						return capt(ctx, target, upstream, dir, tokenSource)
					}
					return plain(ctx, target, upstream, dir, tokenSource)
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, runErr := bench.Run(ctx, cfg)
			if rep != nil && len(rep.Cells) > 0 { // a failed run prints the cells it measured
				write := rep.WriteText
				if asJSON {
					write = rep.WriteJSON
				}
				if err := write(cmd.OutOrStdout()); err != nil {
					return err
				}
			}
			if runErr != nil {
				return runErr
			}
			return rep.Check()
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&workloads, "workload", []string{"all"}, "workloads to run: small, json20k, sse200, sse1m, tokens-small, tokens-sse200, tokens (= the two token workloads) or all (= the first three); comma-separated list accepted")
	fl.IntSliceVar(&conc, "concurrency", bench.DefaultConcurrency, "concurrency levels (comma-separated), each 1 to 1024")
	fl.DurationVar(&duration, "duration", bench.DefaultDuration, "total time spent starting calls, shared among workloads, concurrency levels and targets")
	fl.BoolVar(&asJSON, "json", false, "print the report as one JSON object instead of the table")
	fl.StringVar(&captureExe, "capture-exe", "", "gymtrace executable to run as the capture target (default: this one), e.g. another build to compare")
	_ = fl.MarkHidden("capture-exe")
	return cmd
}

// newBenchPlainProxyCmd builds the hidden `gymtrace bench-plain-proxy`: the bench's baseline
// reverse proxy without capture, run by `gymtrace bench` as a child process.
func newBenchPlainProxyCmd() *cobra.Command {
	var upstream, listen string
	cmd := &cobra.Command{
		Use:    bench.PlainProxyCommand + " --upstream URL [--listen 127.0.0.1:0]",
		Short:  "Run the plain reverse proxy (no capture) that gymtrace bench compares against",
		Hidden: true,
		Args:   noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkUpstream(upstream); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return bench.ServePlainProxy(ctx, upstream, listen, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&upstream, "upstream", "", "base URL of the upstream (required)")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address to listen on (HOST:PORT; port 0 picks a free port)")
	return cmd
}
