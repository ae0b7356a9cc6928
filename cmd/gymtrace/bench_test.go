package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchCmdUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown workload", []string{"bench", "--workload", "huge"}, `--workload: unknown workload "huge"`},
		{"zero concurrency", []string{"bench", "--concurrency", "0"}, "--concurrency 0 must be between 1 and 1024"},
		{"too much concurrency", []string{"bench", "--concurrency", "1,2000"}, "--concurrency 2000 must be between 1 and 1024"},
		{"concurrency not a number", []string{"bench", "--concurrency", "many"}, `invalid argument "many"`},
		{"zero duration", []string{"bench", "--duration", "0s"}, "--duration 0s must be positive"},
		{"positional argument", []string{"bench", "extra"}, `unexpected argument "extra"`},
		{"plain proxy without upstream", []string{"bench-plain-proxy"}, "--upstream is required"},
		{"plain proxy bad upstream", []string{"bench-plain-proxy", "--upstream", "127.0.0.1:9"}, "must be an absolute http:// or https:// URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runGymtrace(t, tc.args...)
			require.Error(t, res.err)
			assert.Equal(t, 2, res.code, "usage error")
			assert.Contains(t, res.err.Error(), tc.want)
			assert.Empty(t, res.stdout)
		})
	}
}

func TestBenchPlainProxyHidden(t *testing.T) {
	res := runGymtrace(t, "--help")
	require.NoError(t, res.err)
	assert.Contains(t, res.stdout, "bench ")
	assert.NotContains(t, res.stdout, "bench-plain-proxy")
}

// TestBenchCmdRuns runs the real binary briefly: it starts its own proxies as child processes,
// exits 0, leaves nothing in the temp dir and ends with the ratio line (or prints one JSON report).
func TestBenchCmdRuns(t *testing.T) {
	bin := buildGymtrace(t)
	ratioLine := regexp.MustCompile(`^capture/plain throughput ratio: \d+\.\d\d$`)
	tests := []struct {
		name     string
		workload string
		extra    []string
		check    func(t *testing.T, stdout string)
	}{
		{"table", "small", nil, func(t *testing.T, stdout string) {
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			assert.Regexp(t, ratioLine, lines[len(lines)-1])
			assert.Equal(t, 1, strings.Count(stdout, "capture/plain throughput ratio"))
			assert.Contains(t, stdout, "small c=4 ")
			assert.Contains(t, stdout, "every answered call has its record")
			assert.Regexp(t, `(?m)^fsync in .*: p50 \d+\.\d{3} ms`, stdout)
			for _, target := range []string{"direct", "plain", "capture", "capture-journal"} {
				assert.Regexp(t, `(?m)^(small\s+4\s+)?\s*`+target+`\s+\d+\s+0\s`, stdout, "a %s row without failed calls", target)
			}
			assert.Regexp(t, `(?m)^\s*capture-journal\s.*\s\d+\.\d{3}\s+\d+\.\d{3}$`, stdout, "the journal row ends with its fsyncs per record and its flush p50")
			assert.Regexp(t, `(?m)^capture-journal/plain throughput ratio: \d+\.\d\d$`, lines[len(lines)-2])
		}},
		{"json", "small", []string{"--json"}, func(t *testing.T, stdout string) {
			var rep struct {
				Ratio float64 `json:"capture_plain_throughput_ratio"`
				Cell  string  `json:"headline_cell"`
				Cells []struct {
					Capture struct {
						Calls           int      `json:"calls"`
						FsyncsPerRecord *float64 `json:"fsyncs_per_record"`
						Syncs           struct {
							WaitedFlushes  int64 `json:"waited_flushes"`
							WaitedFlushP50 int64 `json:"waited_flush_p50_ns"`
						} `json:"syncs"`
					} `json:"capture"`
					Journal struct {
						Calls           int      `json:"calls"`
						FsyncsPerRecord *float64 `json:"fsyncs_per_record"`
						Syncs           struct {
							WaitedFlushes  int64 `json:"waited_flushes"`
							WaitedFlushP50 int64 `json:"waited_flush_p50_ns"`
						} `json:"syncs"`
					} `json:"capture_journal"`
					Ratio  float64 `json:"throughput_ratio_capture_plain"`
					Verify struct {
						Records int `json:"records"`
						Calls   int `json:"calls"`
					} `json:"capture_records"`
				} `json:"cells"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
			require.Len(t, rep.Cells, 1)
			assert.Equal(t, "small c=4", rep.Cell)
			assert.Equal(t, rep.Cells[0].Ratio, rep.Ratio)
			assert.Positive(t, rep.Cells[0].Capture.Calls)
			assert.Positive(t, rep.Cells[0].Journal.Calls)
			require.NotNil(t, rep.Cells[0].Capture.FsyncsPerRecord, "the proxy reported its store's fsyncs")
			require.NotNil(t, rep.Cells[0].Journal.FsyncsPerRecord)
			assert.GreaterOrEqual(t, *rep.Cells[0].Capture.FsyncsPerRecord, 1.0, "per-record: at least one fsync per record at c=4")
			for name, syncs := range map[string]struct{ n, p50 int64 }{
				"capture":         {rep.Cells[0].Capture.Syncs.WaitedFlushes, rep.Cells[0].Capture.Syncs.WaitedFlushP50},
				"capture-journal": {rep.Cells[0].Journal.Syncs.WaitedFlushes, rep.Cells[0].Journal.Syncs.WaitedFlushP50},
			} {
				assert.Positive(t, syncs.n, "%s: the flushes its calls waited on", name)
				assert.Positive(t, syncs.p50, "%s: their median", name)
			}
			assert.Equal(t, rep.Cells[0].Verify.Calls, rep.Cells[0].Verify.Records)
		}},
		// The token workload through the real `gymtrace proxy --token-source vllm`.
		{"tokens", "tokens-small", nil, func(t *testing.T, stdout string) {
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			assert.Regexp(t, ratioLine, lines[len(lines)-1])
			assert.Regexp(t, `tokens-small c=4 (\d+)/(\d+) \+ \d+ token entries \(journal \d+/\d+ \+ \d+ token entries\): every answered call has its record`, stdout)
			assert.Regexp(t, `(?m)^\s*capture\s+\d+\s+0\s.*\s\d+\.\d\d\s+\d+\.\d\d\s+\d+\.\d{3}\s+\d+\.\d{3}$`, stdout, "the capture row gives its ratios, fsyncs per record and flush p50")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(bin, append([]string{"bench", "--duration", "2s", "--workload", tc.workload, "--concurrency", "4"}, tc.extra...)...)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", exitErr.ExitCode(), stdout.String(), stderr.String())
			}
			require.NoError(t, err)
			tc.check(t, stdout.String())
			assert.Equal(t, 4, strings.Count(stderr.String(), "bench: "+tc.workload+" c=4 "), "one progress line per target on stderr: %s", stderr.String())
			entries, err := os.ReadDir(tmp)
			require.NoError(t, err)
			assert.Empty(t, entries, "temporary capture files removed")
		})
	}
}
