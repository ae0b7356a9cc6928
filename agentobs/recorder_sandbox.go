package agentobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gymtrace/gymtrace/semconv"
)

// errNoRecorder is returned when a context carries no recorder.
var errNoRecorder = errors.New("agentobs: the context carries no invocation (start one with Recorder.StartInvocation)")

// RecordSandbox records one finished sandbox run (SPEC §6.2 SandboxObservation) that ran from start
// to end, in the rollout of the invocation ctx carries. obs holds the MEASURED values (the runner
// that ran the command fills them; configured limits are never usage). It emits the span
// "sandbox {role}", kind INTERNAL, child of ctx's span, with the given start and end times and
// gymtrace.rollout.id, gymtrace.sandbox.role / provider / id / exit_code / wall_time_s /
// cpu_time_s / peak_memory_mib / resource_usage_source, error.type and
// gymtrace.observation.status (the outcome; "unknown" when obs.Outcome is ""), and status Error
// unless the outcome is completed or unknown; the recorder's bundle gets obs as it is.
//
// It returns an error, recording nothing, when obs is invalid ([SandboxObservation.Validate]),
// when end is before start, or when ctx carries no invocation. Safe for concurrent use.
func RecordSandbox(ctx context.Context, obs SandboxObservation, start, end time.Time) error {
	if err := obs.Validate(); err != nil {
		return fmt.Errorf("agentobs: record sandbox: %w", err)
	}
	if end.Before(start) {
		return fmt.Errorf("agentobs: record sandbox: end %s is before start %s", end.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
	}
	s := scopeFrom(ctx)
	if s == nil || s.inv == nil {
		return errNoRecorder
	}
	r := s.rec
	outcome := obs.Outcome
	if outcome == "" {
		outcome = SandboxOutcomeUnknown
	}
	attrs := []attribute.KeyValue{
		semconv.GymtraceRolloutID(r.rolloutID),
		semconv.GymtraceSandboxRoleKey.String(string(obs.Role)),
		semconv.GymtraceObservationStatusKey.String(string(outcome)),
	}
	addString := func(k attribute.Key, v *string) {
		if v != nil {
			attrs = append(attrs, k.String(*v))
		}
	}
	addFloat := func(k attribute.Key, v *float64) {
		if v != nil {
			attrs = append(attrs, k.Float64(*v))
		}
	}
	addString(semconv.GymtraceSandboxProviderKey, obs.Provider)
	addString(semconv.GymtraceSandboxIDKey, obs.SandboxID)
	if obs.ExitCode != nil {
		attrs = append(attrs, semconv.GymtraceSandboxExitCodeKey.Int(*obs.ExitCode))
	}
	addFloat(semconv.GymtraceSandboxWallTimeKey, obs.WallTimeS)
	addFloat(semconv.GymtraceSandboxCPUTimeKey, obs.CPUTimeS)
	addFloat(semconv.GymtraceSandboxPeakMemoryKey, obs.PeakMemoryMiB)
	addString(semconv.GymtraceSandboxResourceUsageSourceKey, obs.ResourceUsageSource)
	addString(semconv.ErrorTypeKey, obs.ErrorType)

	start, end = canonicalTime(start), canonicalTime(end)
	_, e := r.startSpan(ctx, semconv.SandboxSpanName(string(obs.Role)), start, attrs)
	code, desc := codes.Unset, ""
	if outcome != SandboxOutcomeCompleted && outcome != SandboxOutcomeUnknown {
		code, desc = codes.Error, string(outcome)
		if obs.ErrorType != nil {
			desc += ": " + *obs.ErrorType
		}
	}
	e.mu.Lock()
	e.ended, e.end = true, end
	if code == codes.Error {
		e.status = code
		e.span.SetStatus(code, desc)
	}
	rep := checkLimits(e.span, e.attrs, e.events, e.links)
	e.mu.Unlock()
	e.endSpan(r.rolloutID, rep, trace.WithTimestamp(end))
	return nil
}
