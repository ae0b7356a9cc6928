package agentobs

import (
	"fmt"
	"strconv"

	"github.com/gymtrace/gymtrace/ojson"
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
	dst, _ = appendFields(dst, "", r.fields()) // no field of a reference can fail
	return dst
}

// MarshalJSON writes {"code":...,"invocation_id":...,"detail":...}, nulls included.
func (g ObservationGap) MarshalJSON() ([]byte, error) { return g.appendJSON(nil), nil }

func (g ObservationGap) appendJSON(dst []byte) []byte {
	dst, _ = appendFields(dst, "", g.fields()) // no field of a gap can fail
	return dst
}

// MarshalJSON writes the invocation's JSON-mode dump, "kind" first. It fails only when a
// conversation item is not one strict JSON object.
func (a AgentInvocation) MarshalJSON() ([]byte, error) { return marshal(&a) }

func (a *AgentInvocation) appendJSON(dst []byte) ([]byte, error) {
	dst, err := appendFields(dst, KindAgentInvocation, a.fields())
	if err != nil {
		return dst, errorf("agent_invocation %s: %w", strconv.Quote(a.InvocationID), err)
	}
	return dst, nil
}

// MarshalJSON writes the tool call's JSON-mode dump, "kind" first.
func (t ToolCallObservation) MarshalJSON() ([]byte, error) { return marshal(&t) }

func (t *ToolCallObservation) appendJSON(dst []byte) ([]byte, error) {
	return appendFields(dst, KindToolCall, t.fields())
}

// MarshalJSON writes the compaction's JSON-mode dump, "kind" first.
func (c ContextCompactionObservation) MarshalJSON() ([]byte, error) { return marshal(&c) }

func (c *ContextCompactionObservation) appendJSON(dst []byte) ([]byte, error) {
	return appendFields(dst, KindContextCompaction, c.fields())
}

// MarshalJSON writes the sandbox's JSON-mode dump, "kind" first.
func (s SandboxObservation) MarshalJSON() ([]byte, error) { return marshal(&s) }

func (s *SandboxObservation) appendJSON(dst []byte) ([]byte, error) {
	return appendFields(dst, KindSandbox, s.fields())
}

// marshal is the body of the MarshalJSON methods whose encoding can fail: nil on error.
func marshal(v interface{ appendJSON([]byte) ([]byte, error) }) ([]byte, error) {
	b, err := v.appendJSON(nil)
	if err != nil {
		return nil, err
	}
	return b, nil
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
	if isNilRecord(r) {
		return dst, errorf("nil record")
	}
	return r.appendJSON(dst)
}

func appendGaps(dst []byte, gaps []ObservationGap) []byte {
	return appendSlice(dst, gaps, func(d []byte, g ObservationGap) []byte { return g.appendJSON(d) })
}

func appendRefs(dst []byte, refs []ModelCallRef) []byte {
	return appendSlice(dst, refs, func(d []byte, r ModelCallRef) []byte { return r.appendJSON(d) })
}
