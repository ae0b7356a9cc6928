package claudecode

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// Run is what a harness knows when one Claude Code CLI run ends (SPEC §6.3).
type Run struct {
	// StreamJSON is the CLI's stdout in --output-format=stream-json (one JSON event per line;
	// other lines are skipped).
	StreamJSON []byte
	// ExitCode is the process's exit status as Python's Popen.returncode gives it (negative
	// signal number when a signal ended it); nil when there is none.
	ExitCode *int
	// TimedOut reports that the harness killed the CLI at its deadline.
	TimedOut bool
	// Elapsed is the measured process time, used when the result event has no duration_ms (or
	// always, on a timeout).
	Elapsed time.Duration
}

// Apply sets the root outcome of the run on opts (SPEC §6.3): RootStatus and RootErrorType from
// the CLI's result event (subtype error_max_turns → incomplete with that subtype; is_error true or
// a subtype starting "error_" → failed with the subtype or "agent_error"; a non-zero exit code →
// failed, "process_exit_<code>"; subtype success → completed; otherwise incomplete,
// "result_missing"; a timeout → incomplete, "timeout"); RootDurationMS from the result's
// duration_ms when it is a number >= 0, else the measured time (always the measured time on a
// timeout); and CompactionAttempts from the stream's system/status events (a compact_result
// "failed" records a failed attempt; a session still compacting at the end an unknown one, in the
// order those sessions started compacting — the reference iterates a Python set there). Other
// fields of opts are left as they are.
func (r Run) Apply(opts *Options) {
	meta := parseStreamJSON(ojson.DecodeUTF8(r.StreamJSON))
	opts.CompactionAttempts = meta.attempts
	measured := float64(r.Elapsed) / float64(time.Millisecond)
	if r.TimedOut {
		opts.RootStatus = agentobs.InvocationStatusIncomplete
		opts.RootErrorType = ptr("timeout")
		opts.RootDurationMS = &measured
		return
	}
	if meta.durationMS != nil {
		opts.RootDurationMS = ptr(*meta.durationMS)
	} else {
		opts.RootDurationMS = &measured
	}
	opts.RootStatus, opts.RootErrorType = invocationOutcome(meta, r.ExitCode)
}

// streamMeta is what the reference's parse_stream_json keeps for observations.
type streamMeta struct {
	subtype    *string
	isError    *bool
	durationMS *float64
	attempts   []CompactionAttempt
}

// parseStreamJSON reads the CLI's stream: lines as Python's str.splitlines() gives them, each
// stripped and parsed as JSON (lines that are not JSON objects are skipped).
func parseStreamJSON(stdout string) streamMeta {
	var meta streamMeta
	var compacting []string // sessions compacting now, in the order they started
	for _, line := range pySplitLines(stdout) {
		line = python.Strip(line)
		if line == "" {
			continue
		}
		ev, err := python.Loads([]byte(line))
		if err != nil || ev.Kind() != ojson.KindObject {
			continue
		}
		typ, _ := ev.Get("type")
		switch t, _ := typ.AsString(); t {
		case "result":
			if v, ok := ev.Get("subtype"); ok {
				if s, ok := v.AsString(); ok {
					meta.subtype = &s
				}
			}
			if v, ok := ev.Get("is_error"); ok {
				if b, ok := v.AsBool(); ok {
					meta.isError = &b
				}
			}
			if v, ok := ev.Get("duration_ms"); ok && v.Kind() == ojson.KindNumber {
				if f, ok := v.Float64(); ok && f >= 0 && !math.IsInf(f, 0) {
					meta.durationMS = &f
				}
			}
		case "system":
			if st, _ := ev.Get("subtype"); !isString(st, "status") {
				continue
			}
			session, ok := nonEmptyString(ev.Get("session_id"))
			if !ok {
				continue
			}
			if st, _ := ev.Get("status"); isString(st, "compacting") {
				if !slices.Contains(compacting, session) {
					compacting = append(compacting, session)
				}
				continue
			}
			res, _ := ev.Get("compact_result")
			if isString(res, "failed") || isString(res, "success") {
				if isString(res, "failed") {
					meta.attempts = append(meta.attempts, CompactionAttempt{InvocationID: session, Outcome: agentobs.CompactionOutcomeFailed})
				}
				compacting = slices.DeleteFunc(compacting, func(s string) bool { return s == session })
			}
		}
	}
	for _, s := range compacting {
		meta.attempts = append(meta.attempts, CompactionAttempt{InvocationID: s, Outcome: agentobs.CompactionOutcomeUnknown})
	}
	return meta
}

// invocationOutcome is the reference's _invocation_outcome (SPEC §6.3).
func invocationOutcome(meta streamMeta, exitCode *int) (agentobs.InvocationStatus, *string) {
	if meta.subtype != nil && *meta.subtype == "error_max_turns" {
		return agentobs.InvocationStatusIncomplete, ptr(*meta.subtype)
	}
	if (meta.isError != nil && *meta.isError) || (meta.subtype != nil && strings.HasPrefix(*meta.subtype, "error_")) {
		if meta.subtype != nil {
			return agentobs.InvocationStatusFailed, ptr(*meta.subtype)
		}
		return agentobs.InvocationStatusFailed, ptr("agent_error")
	}
	if exitCode != nil && *exitCode != 0 {
		return agentobs.InvocationStatusFailed, ptr("process_exit_" + strconv.Itoa(*exitCode))
	}
	if meta.subtype != nil && *meta.subtype == "success" {
		return agentobs.InvocationStatusCompleted, nil
	}
	return agentobs.InvocationStatusIncomplete, ptr("result_missing")
}

// pySplitLines is Python's str.splitlines(): lines end at \n, \r, \r\n, \v, \f, \x1c, \x1d,
// \x1e, \x85, U+2028 and U+2029; terminators are dropped; no empty last line.
func pySplitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				size = 2
			}
		default:
			i += size
			continue
		}
		lines = append(lines, s[start:i])
		i += size
		start = i
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}
