package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/rollout"
)

func TestBuildFixture(t *testing.T) {
	fx := writeFixture(t)
	rep := buildFixture(t, fx, Options{})

	var ids []string
	byID := map[string]*Rollout{}
	for i := range rep.Rollouts {
		ids = append(ids, rep.Rollouts[i].ID)
		byID[rep.Rollouts[i].ID] = &rep.Rollouts[i]
	}
	assert.Equal(t, []string{"0-0", "0-1", "1-0", "1-1", "2-0", "3-0", "task-000123-rollout-0007-attempt-2", "9-9", "uncorrelated"}, ids,
		"the rollouts file's order, then the other captures")

	tests := []struct {
		id    string
		calls int
		flags []FindingKind
		line  int
	}{
		{"0-0", 2, nil, 1},
		{"0-1", 3, nil, 2},
		{"1-0", 2, []FindingKind{FindingAllCallsFailed}, 3},
		{"1-1", 1, []FindingKind{FindingDamagedLines, FindingIncomplete}, 4},
		{"2-0", 0, []FindingKind{FindingNoRecords}, 5},
		{"3-0", 0, []FindingKind{FindingNoRecords, FindingIncomplete}, 7},
		{"9-9", 1, []FindingKind{FindingNotInRollouts}, 0},
		{"uncorrelated", 1, []FindingKind{FindingUncorrelated}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r := byID[tt.id]
			require.NotNil(t, r)
			assert.Len(t, r.Calls, tt.calls)
			assert.Equal(t, tt.flags, r.Flags)
			assert.Equal(t, tt.line, r.RolloutsLine)
			assert.Equal(t, rollout.ID{Rollout: tt.id}.TraceID().String(), r.TraceID)
			for _, c := range r.Calls {
				assert.Nil(t, c.Request, "payloads are not kept without PayloadBytes")
				assert.Nil(t, c.Response)
				assert.Empty(t, c.Payloads)
			}
		})
	}

	r := byID["0-1"]
	assert.Equal(t, []CategoryCount{{"rate_limit", 1}, {"stream_truncated", 1}}, r.Errors)
	assert.Equal(t, 2, r.FailedCalls)
	require.NotNil(t, r.TTFTP50MS)
	assert.Equal(t, 250.0, *r.TTFTP50MS, "nearest-rank median of 300, 12, 250")
	assert.Equal(t, 1, byID["1-1"].DamagedLines)
	assert.Equal(t, []capture.Gap{{Code: capture.GapRecordsUnreadable, Detail: "count=1"}, {Code: capture.GapIncomplete}}, byID["1-1"].Gaps)

	tot := rep.Totals
	assert.Equal(t, 9, tot.Rollouts)
	assert.Equal(t, 7, tot.RolloutsWithCalls)
	assert.Equal(t, 11, tot.Calls)
	assert.Equal(t, 4, tot.FailedCalls)
	assert.Equal(t, 1, tot.DamagedLines)
	assert.Equal(t, int64(6364), *tot.Metrics.TokensIn)
	assert.Equal(t, int64(4560), *tot.Metrics.CachedTokens)
	assert.Equal(t, 11, tot.Metrics.NumCalls)
	assert.Equal(t, t0, *tot.FirstStartedAt)

	kinds := map[FindingKind]int{}
	for _, f := range rep.Findings {
		kinds[f.Kind]++
	}
	assert.Equal(t, map[FindingKind]int{FindingMalformedRow: 1, FindingAllCallsFailed: 1, FindingDamagedLines: 1, FindingIncomplete: 2,
		FindingNoRecords: 2, FindingNotInRollouts: 1, FindingUncorrelated: 1}, kinds)
	assert.Equal(t, FindingMalformedRow, rep.Findings[0].Kind, "run-level findings first")
}

func TestBuildRunID(t *testing.T) {
	fx := writeFixture(t)
	rep, err := Build(t.Context(), fx.dir, Options{RunID: "run-1"})
	require.NoError(t, err)
	assert.Equal(t, rollout.ID{Run: "run-1", Rollout: rep.Rollouts[0].ID}.TraceID().String(), rep.Rollouts[0].TraceID)
	assert.NotEqual(t, rollout.ID{Rollout: rep.Rollouts[0].ID}.TraceID().String(), rep.Rollouts[0].TraceID)
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	tests := []struct {
		name string
		dir  string
		is   error
	}{
		{"missing directory", filepath.Join(dir, "nope"), ErrNoCaptureDir},
		{"not a directory", file, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(t.Context(), tt.dir, Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.dir)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
		})
	}
	_, err := os.Stat(filepath.Join(dir, "nope"))
	assert.True(t, os.IsNotExist(err), "Build never creates the directory")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	fx := writeFixture(t)
	_, err = Build(ctx, fx.dir, Options{})
	assert.ErrorIs(t, err, context.Canceled)
}

// An unreadable capture is a finding that names the command to look at it, with the run's real
// arguments (shell-quoted), never a placeholder.
func TestBuildUnreadableCapture(t *testing.T) {
	tests := []struct {
		name string
		sub  string // the capture directory below the temporary one
		args string // Options.CommandArgs
		want string // the command named, with "<dir>" for the capture directory
	}{
		{name: "default arguments", sub: "c", want: "gymtrace calls --capture-dir <dir> r-1"},
		{name: "a directory that needs quoting", sub: "my captures", want: "gymtrace calls --capture-dir '<dir>' r-1"},
		{name: "the CLI's arguments", sub: "c", args: "--capture-dir /base --run-id r1", want: "gymtrace calls --capture-dir /base --run-id r1 r-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tt.sub)
			// A directory where the capture file should be: listing finds it, reading fails.
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "r-1"+capture.CaptureFileSuffix), 0o700))
			rep, err := Build(t.Context(), dir, Options{CommandArgs: tt.args})
			require.NoError(t, err)
			require.Len(t, rep.Rollouts, 1)
			assert.Equal(t, []FindingKind{FindingUnreadable}, rep.Rollouts[0].Flags)
			assert.Contains(t, rep.Findings[0].Message, "could not be read")
			assert.Contains(t, rep.Findings[0].Message, "(see `"+strings.ReplaceAll(tt.want, "<dir>", dir)+"`)")
			assert.NotContains(t, rep.Findings[0].Message, "DIR")
		})
	}
}

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/data/run-1/c_2", "/data/run-1/c_2"},
		{"", "''"},
		{"/my captures", "'/my captures'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ShellQuote(tt.in), tt.in)
	}
}

// TestBuildUnreadableObservationFiles: an _unattributed.observations.jsonl or a rollout's
// <id>.observations.jsonl that is a symbolic link, a FIFO or a directory (which the capture store
// never opens) is a finding naming the file and the rule, as an unreadable capture file is, never
// Build's error; the link's target is never read.
func TestBuildUnreadableObservationFiles(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte(`{"not":"observations"}`+"\n"), 0o600))
	record := `{"model_call_id":"c1","dialect":"chat","status_code":200,"error_category":null}` + "\n"
	for _, tt := range []struct {
		kind string
		make func(t *testing.T, path string)
		rule string
	}{
		{"a symbolic link", func(t *testing.T, path string) { require.NoError(t, os.Symlink(secret, path)) }, "not a regular file (a symbolic link)"},
		{"a FIFO", func(t *testing.T, path string) { require.NoError(t, syscall.Mkfifo(path, 0o600)) }, "not a regular file (a FIFO)"},
		{"a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o700)) }, "not a regular file (a directory)"},
	} {
		for _, traceViews := range []bool{false, true} {
			opts := Options{TraceViews: traceViews}
			setup := func(t *testing.T) string {
				dir := t.TempDir()
				require.NoError(t, os.WriteFile(filepath.Join(dir, "r-1"+capture.CaptureFileSuffix), []byte(record), 0o600))
				return dir
			}
			t.Run(fmt.Sprintf("unattributed file is %s, trace views %v", tt.kind, traceViews), func(t *testing.T) {
				dir := setup(t)
				path := filepath.Join(dir, capture.UnattributedObservationsFile)
				tt.make(t, path)
				rep, err := Build(t.Context(), dir, opts)
				require.NoError(t, err, "an unreadable unattributed file is a finding, not the report's error")
				require.Len(t, rep.Rollouts, 1, "the rollouts are still reported")
				assert.Empty(t, rep.Rollouts[0].Flags)
				require.Len(t, rep.Findings, 1)
				assert.Equal(t, FindingUnattributedObservations, rep.Findings[0].Kind)
				assert.Contains(t, rep.Findings[0].Message, path+" cannot be read: ")
				assert.Contains(t, rep.Findings[0].Message, tt.rule)
			})
			t.Run(fmt.Sprintf("rollout's observations file is %s, trace views %v", tt.kind, traceViews), func(t *testing.T) {
				dir := setup(t)
				path := filepath.Join(dir, "r-1"+capture.ObservationsFileSuffix)
				tt.make(t, path)
				rep, err := Build(t.Context(), dir, opts)
				require.NoError(t, err)
				require.Len(t, rep.Rollouts, 1)
				assert.Equal(t, []FindingKind{FindingObservationsUnreadable}, rep.Rollouts[0].Flags)
				require.Len(t, rep.Findings, 1)
				f := rep.Findings[0]
				assert.Equal(t, FindingObservationsUnreadable, f.Kind)
				assert.Equal(t, "r-1", f.RolloutID)
				assert.Contains(t, f.Message, "rollout r-1: its observations file cannot be read")
				assert.Contains(t, f.Message, path+": "+tt.rule)
				assert.NotContains(t, f.Message, "not\":\"observations", "the target is never read")
				if traceViews {
					assert.Contains(t, rep.Rollouts[0].Trace.ObservationsError, tt.rule, "the trace view says why too")
				}
			})
		}
	}
}

func TestBuildProgress(t *testing.T) {
	fx := writeFixture(t)
	var got []Progress
	_, err := Build(t.Context(), fx.dir, Options{ProgressEvery: 3, OnProgress: func(p Progress) { got = append(got, p) }})
	require.NoError(t, err)
	require.Len(t, got, 3, "after 3 and 6 of 8 rollouts, then at the end: %+v", got)
	assert.Equal(t, 3, got[0].Done)
	assert.Equal(t, 8, got[0].Total)
	assert.Equal(t, 8, got[2].Done)
	assert.Equal(t, 11, got[2].Calls)

	got = nil
	_, err = Build(t.Context(), fx.dir, Options{OnProgress: func(p Progress) { got = append(got, p) }})
	require.NoError(t, err)
	assert.Empty(t, got, "a small run reports no progress")
}

func TestBuildPayloads(t *testing.T) {
	fx := writeFixture(t)
	t.Run("cut per payload", func(t *testing.T) {
		rep := buildFixture(t, fx, Options{PayloadBytes: 40})
		p := rep.Rollouts[0].Calls[0].Payloads
		require.Len(t, p, 2)
		assert.Equal(t, "request", p[0].Name)
		assert.Equal(t, "response", p[1].Name)
		assert.True(t, p[1].Truncated)
		assert.LessOrEqual(t, len(p[1].Text), 40)
		assert.Greater(t, p[1].Size, 40)
		assert.True(t, strings.HasPrefix(p[0].Text, "{\n  \"model\""), "JSON is pretty-printed: %q", p[0].Text)
	})
	t.Run("budget", func(t *testing.T) {
		rep := buildFixture(t, fx, Options{PayloadBytes: 1 << 20, PayloadBudget: 100})
		var kept, omitted int
		for _, r := range rep.Rollouts {
			for _, c := range r.Calls {
				for _, p := range c.Payloads {
					if p.Omitted {
						omitted++
						assert.Empty(t, p.Text)
					} else {
						kept++
					}
				}
			}
		}
		assert.Equal(t, 2, kept, "the budget is spent after the first payload that reaches it")
		assert.Equal(t, 20, omitted)
	})
}
