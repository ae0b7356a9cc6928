package agentobs

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/gymtrace/gymtrace/internal/ojson"
)

// The encoders below write Gym's JSON-mode dumps (SPEC §6.1): every field in declared order, nulls
// included, compact, strings per ojson.AppendString and floats per ojson.AppendFloat (orjson's
// float text, SPEC §0 D6). Enum fields left at "" are written as their SPEC default. They do not
// validate: an invalid value is written as it is. Note that encoding/json's Marshal re-escapes <,
// > and & in a Marshaler's output; use [AgentObservationBundle.AppendJSON] for the exact bytes.

// MarshalJSON writes {"type":...,"name":...}.
func (m ModelServerRef) MarshalJSON() ([]byte, error) { return m.appendJSON(nil), nil }

func (m ModelServerRef) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = ojson.AppendString(dst, m.Type)
	dst = append(dst, `,"name":`...)
	dst = ojson.AppendString(dst, m.Name)
	return append(dst, '}')
}

// MarshalJSON writes {"model_call_id":...,"model_ref":...,"response_id":...}, nulls included.
func (r ModelCallRef) MarshalJSON() ([]byte, error) { return r.appendJSON(nil), nil }

func (r ModelCallRef) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"model_call_id":`...)
	dst = appendStr(dst, r.ModelCallID)
	dst = append(dst, `,"model_ref":`...)
	if r.ModelRef != nil {
		dst = r.ModelRef.appendJSON(dst)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"response_id":`...)
	dst = appendStr(dst, r.ResponseID)
	return append(dst, '}')
}

// MarshalJSON writes {"code":...,"invocation_id":...,"detail":...}, nulls included.
func (g ObservationGap) MarshalJSON() ([]byte, error) { return g.appendJSON(nil), nil }

func (g ObservationGap) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"code":`...)
	dst = ojson.AppendString(dst, g.Code)
	dst = append(dst, `,"invocation_id":`...)
	dst = appendStr(dst, g.InvocationID)
	dst = append(dst, `,"detail":`...)
	dst = appendStr(dst, g.Detail)
	return append(dst, '}')
}

// MarshalJSON writes the invocation's JSON-mode dump, "kind" first. It fails only when a
// conversation item is not one strict JSON object.
func (a AgentInvocation) MarshalJSON() ([]byte, error) { return a.appendJSON(nil) }

func (a AgentInvocation) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"kind":"agent_invocation","invocation_id":`...)
	dst = ojson.AppendString(dst, a.InvocationID)
	dst = append(dst, `,"parent_invocation_id":`...)
	dst = appendStr(dst, a.ParentInvocationID)
	dst = append(dst, `,"spawned_by_tool_call_id":`...)
	dst = appendStr(dst, a.SpawnedByToolCallID)
	dst = append(dst, `,"status":`...)
	dst = ojson.AppendString(dst, orDefault(string(a.Status), string(InvocationStatusUnknown)))
	dst = append(dst, `,"duration_ms":`...)
	dst = appendFloat(dst, a.DurationMS)
	dst = append(dst, `,"error_type":`...)
	dst = appendStr(dst, a.ErrorType)
	dst = append(dst, `,"model_calls":`...)
	dst = appendRefs(dst, a.ModelCalls)
	dst = append(dst, `,"conversation":[`...)
	for i, item := range a.Conversation {
		if i > 0 {
			dst = append(dst, ',')
		}
		n := len(dst)
		var err error
		if dst, err = ojson.Compact(dst, item); err != nil {
			return nil, errorf("agent_invocation %s: %s: %w", strconv.Quote(a.InvocationID), indexPath("conversation", i), err)
		}
		if dst[n] != '{' {
			return nil, errorf("agent_invocation %s: %s: not a JSON object", strconv.Quote(a.InvocationID), indexPath("conversation", i))
		}
	}
	return append(dst, "]}"...), nil
}

// MarshalJSON writes the tool call's JSON-mode dump, "kind" first.
func (t ToolCallObservation) MarshalJSON() ([]byte, error) { return t.appendJSON(nil), nil }

func (t ToolCallObservation) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":"tool_call","invocation_id":`...)
	dst = ojson.AppendString(dst, t.InvocationID)
	dst = append(dst, `,"tool_call_id":`...)
	dst = ojson.AppendString(dst, t.ToolCallID)
	dst = append(dst, `,"sandbox_id":`...)
	dst = appendStr(dst, t.SandboxID)
	dst = append(dst, `,"tool_name":`...)
	dst = appendStr(dst, t.ToolName)
	dst = append(dst, `,"started_at":`...)
	dst = appendFloat(dst, t.StartedAt)
	dst = append(dst, `,"completed_at":`...)
	dst = appendFloat(dst, t.CompletedAt)
	dst = append(dst, `,"duration_ms":`...)
	dst = appendFloat(dst, t.DurationMS)
	dst = append(dst, `,"timing_source":`...)
	if t.TimingSource != nil {
		dst = ojson.AppendString(dst, string(*t.TimingSource))
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"status":`...)
	dst = ojson.AppendString(dst, orDefault(string(t.Status), string(ToolCallStatusUnknown)))
	dst = append(dst, `,"error_type":`...)
	dst = appendStr(dst, t.ErrorType)
	return append(dst, '}')
}

// MarshalJSON writes the compaction's JSON-mode dump, "kind" first.
func (c ContextCompactionObservation) MarshalJSON() ([]byte, error) { return c.appendJSON(nil), nil }

func (c ContextCompactionObservation) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":"context_compaction","invocation_id":`...)
	dst = ojson.AppendString(dst, c.InvocationID)
	dst = append(dst, `,"observed_at":`...)
	dst = appendFloat(dst, c.ObservedAt)
	dst = append(dst, `,"trigger":`...)
	dst = appendStr(dst, c.Trigger)
	dst = append(dst, `,"tokens_before":`...)
	dst = appendInt(dst, c.TokensBefore)
	dst = append(dst, `,"tokens_after":`...)
	dst = appendInt(dst, c.TokensAfter)
	dst = append(dst, `,"outcome":`...)
	dst = ojson.AppendString(dst, orDefault(string(c.Outcome), string(CompactionOutcomeUnknown)))
	dst = append(dst, `,"summary":`...)
	dst = appendStr(dst, c.Summary)
	dst = append(dst, `,"first_kept_item_id":`...)
	dst = appendStr(dst, c.FirstKeptItemID)
	dst = append(dst, `,"before_model_call":`...)
	dst = appendRefPtr(dst, c.BeforeModelCall)
	dst = append(dst, `,"model_calls":`...)
	dst = appendRefs(dst, c.ModelCalls)
	dst = append(dst, `,"after_model_call":`...)
	dst = appendRefPtr(dst, c.AfterModelCall)
	return append(dst, '}')
}

// MarshalJSON writes the sandbox's JSON-mode dump, "kind" first.
func (s SandboxObservation) MarshalJSON() ([]byte, error) { return s.appendJSON(nil), nil }

func (s SandboxObservation) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":"sandbox","role":`...)
	dst = ojson.AppendString(dst, string(s.Role))
	dst = append(dst, `,"provider":`...)
	dst = appendStr(dst, s.Provider)
	dst = append(dst, `,"sandbox_id":`...)
	dst = appendStr(dst, s.SandboxID)
	dst = append(dst, `,"outcome":`...)
	dst = ojson.AppendString(dst, orDefault(string(s.Outcome), string(SandboxOutcomeUnknown)))
	dst = append(dst, `,"exit_code":`...)
	dst = appendInt(dst, s.ExitCode)
	dst = append(dst, `,"wall_time_s":`...)
	dst = appendFloat(dst, s.WallTimeS)
	dst = append(dst, `,"cpu_time_s":`...)
	dst = appendFloat(dst, s.CPUTimeS)
	dst = append(dst, `,"peak_memory_mib":`...)
	dst = appendFloat(dst, s.PeakMemoryMiB)
	dst = append(dst, `,"resource_usage_source":`...)
	dst = appendStr(dst, s.ResourceUsageSource)
	dst = append(dst, `,"error_type":`...)
	dst = appendStr(dst, s.ErrorType)
	return append(dst, '}')
}

// MarshalJSON writes the bundle's JSON-mode dump (see [AgentObservationBundle.AppendJSON]).
func (b AgentObservationBundle) MarshalJSON() ([]byte, error) { return b.AppendJSON(nil) }

// AppendJSON appends the bundle's JSON-mode dump to dst (SPEC §5.4, §6.1): {"source","records",
// "gaps"}, every record and gap with all its fields, compact, encoded like orjson. It fails when a
// record is nil or an invocation's conversation item is not one strict JSON object; dst is then
// returned unchanged in length.
func (b AgentObservationBundle) AppendJSON(dst []byte) ([]byte, error) {
	n := len(dst)
	dst = append(dst, `{"source":`...)
	dst = ojson.AppendString(dst, b.Source)
	dst = append(dst, `,"records":[`...)
	for i, r := range b.Records {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendRecord(dst, r); err != nil {
			return dst[:n], fmt.Errorf("%s: %w", indexPath("records", i), err)
		}
	}
	dst = append(dst, `],"gaps":`...)
	dst = appendGaps(dst, b.Gaps)
	return append(dst, '}'), nil
}

func appendRecord(dst []byte, r Record) ([]byte, error) {
	if r == nil || isNilRecord(r) {
		return dst, errorf("nil record")
	}
	switch v := r.(type) {
	case *AgentInvocation:
		return v.appendJSON(dst)
	case *ToolCallObservation:
		return v.appendJSON(dst), nil
	case *ContextCompactionObservation:
		return v.appendJSON(dst), nil
	case *SandboxObservation:
		return v.appendJSON(dst), nil
	}
	b, err := json.Marshal(r) // unreachable: Record is sealed
	return append(dst, b...), err
}

func appendGaps(dst []byte, gaps []ObservationGap) []byte {
	dst = append(dst, '[')
	for i, g := range gaps {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = g.appendJSON(dst)
	}
	return append(dst, ']')
}

func appendRefs(dst []byte, refs []ModelCallRef) []byte {
	dst = append(dst, '[')
	for i, r := range refs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.appendJSON(dst)
	}
	return append(dst, ']')
}

func appendRefPtr(dst []byte, r *ModelCallRef) []byte {
	if r == nil {
		return append(dst, "null"...)
	}
	return r.appendJSON(dst)
}

func appendStr(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return ojson.AppendString(dst, *s)
}

func appendFloat(dst []byte, f *float64) []byte {
	if f == nil {
		return append(dst, "null"...)
	}
	return ojson.AppendFloat(dst, *f)
}

func appendInt(dst []byte, n *int) []byte {
	if n == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, int64(*n), 10)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
