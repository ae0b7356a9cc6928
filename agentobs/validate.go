package agentobs

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/gymtrace/gymtrace/ojson"
)

// Validation error texts that SPEC §6.2 fixes (Gym's own messages).
const (
	msgRefKeys          = "model_call_id or both model_ref and response_id are required"
	msgInvocationUnique = "invocation_id must be unique within an observation bundle"
	msgParentCycle      = "parent_invocation_id must not form a cycle"
	msgTiming           = "completed_at must not precede started_at"
)

// errorf builds an error of this package.
func errorf(format string, args ...any) error {
	return fmt.Errorf("agentobs: "+format, args...)
}

// fieldError wraps err with the path of the field it is about; each error of a joined error gets
// the path, so every line of the message names its field.
func fieldError(path string, err error) error {
	if err == nil || path == "" {
		return err
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs := joined.Unwrap()
		out := make([]error, len(errs))
		for i, e := range errs {
			out[i] = fieldError(path, e)
		}
		return errors.Join(out...)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// The validate methods implement the exported Validate methods (documented below) without the
// "agentobs: <what>: " prefix, so that a containing value can add the field path.

func (m ModelServerRef) validate() error {
	if m.Type != ModelRefTypeResponsesAPIModels {
		return fieldError("type", fmt.Errorf("%s is not %q", strconv.Quote(m.Type), ModelRefTypeResponsesAPIModels))
	}
	return nil
}

func (r ModelCallRef) validate() error {
	if r.ModelRef != nil {
		if err := r.ModelRef.validate(); err != nil {
			return fieldError("model_ref", err)
		}
	}
	if !truthy(r.ModelCallID) && !(r.ModelRef != nil && truthy(r.ResponseID)) {
		return errors.New(msgRefKeys)
	}
	return nil
}

func (ObservationGap) validate() error { return nil }

// A record's rules are those of its field table ([validateFields]), and a tool call's timing.

func (a AgentInvocation) validate() error { return errors.Join(validateFields(a.fields())...) }

func (t ToolCallObservation) validate() error {
	errs := validateFields(t.fields())
	if t.StartedAt != nil && t.CompletedAt != nil && *t.CompletedAt < *t.StartedAt {
		errs = append(errs, fmt.Errorf("%s (started_at %s, completed_at %s)", msgTiming,
			ojson.AppendFloat(nil, *t.StartedAt), ojson.AppendFloat(nil, *t.CompletedAt)))
	}
	return errors.Join(errs...)
}

func (c ContextCompactionObservation) validate() error {
	return errors.Join(validateFields(c.fields())...)
}

func (s SandboxObservation) validate() error { return errors.Join(validateFields(s.fields())...) }

func (b AgentObservationBundle) validate() error {
	var errs []error
	invocations := make(map[string]*AgentInvocation)
	var order []string
	duplicate := false
	for i, r := range b.Records {
		path := indexPath("records", i)
		if isNilRecord(r) {
			errs = append(errs, fieldError(path, errors.New("nil record")))
			continue
		}
		if err := r.validate(); err != nil {
			errs = append(errs, fieldError(path, err))
		}
		if inv, ok := r.(*AgentInvocation); ok {
			if _, seen := invocations[inv.InvocationID]; seen {
				duplicate = true
				continue
			}
			invocations[inv.InvocationID] = inv
			order = append(order, inv.InvocationID)
		}
	}
	if duplicate {
		errs = append(errs, errors.New(msgInvocationUnique))
	} else if id, ok := findCycle(order, invocations); ok {
		errs = append(errs, fmt.Errorf("%s (invocation %s)", msgParentCycle, strconv.Quote(id)))
	}
	return errors.Join(errs...)
}

// findCycle walks each invocation's parent chain (SPEC §6.2) and reports an invocation on a cycle.
func findCycle(order []string, invocations map[string]*AgentInvocation) (string, bool) {
	checked := make(map[string]bool, len(order))
	for _, id := range order {
		chain := make(map[string]bool)
		current := id
		for {
			inv, present := invocations[current]
			if !present || checked[current] {
				break
			}
			if chain[current] {
				return current, true
			}
			chain[current] = true
			if inv.ParentInvocationID == nil {
				break
			}
			current = *inv.ParentInvocationID
		}
		for c := range chain {
			checked[c] = true
		}
	}
	return "", false
}

// isNilRecord reports a nil Record or a typed nil pointer stored in one (every Record is a pointer).
func isNilRecord(r Record) bool { return r == nil || reflect.ValueOf(r).IsNil() }

func validateRefs(field string, refs []ModelCallRef) []error {
	var errs []error
	for i, r := range refs {
		errs = append(errs, fieldError(indexPath(field, i), r.validate()))
	}
	return errs
}

// truthy is Python truthiness of an Optional[str]: set and non-empty.
func truthy(s *string) bool { return s != nil && *s != "" }

func indexPath(field string, i int) string {
	return field + "[" + strconv.Itoa(i) + "]"
}

func enumError(field, got string, allowed ...string) error {
	return fieldError(field, fmt.Errorf("%s is not one of %q", strconv.Quote(got), allowed))
}

// finite rejects NaN and ±Inf: they have no JSON form (they would be written as null).
func finite(field string, f *float64) error {
	if f != nil && (math.IsNaN(*f) || math.IsInf(*f, 0)) {
		return fieldError(field, fmt.Errorf("%v is not a finite number", *f))
	}
	return nil
}

// nonNegative is pydantic's ge=0 on an Optional[float] plus [finite].
func nonNegative(field string, f *float64) error {
	if err := finite(field, f); err != nil {
		return err
	}
	if f != nil && *f < 0 {
		return fieldError(field, fmt.Errorf("%s must be greater than or equal to 0", ojson.AppendFloat(nil, *f)))
	}
	return nil
}

// Validate reports whether m satisfies SPEC §6.2: Type must be "responses_api_models". The error
// has the prefix "agentobs: model_ref: ".
func (m ModelServerRef) Validate() error { return wrapValidation("model_ref", m.validate()) }

// Validate reports whether r satisfies SPEC §6.2: a non-empty ModelCallID, or a ModelRef together
// with a non-empty ResponseID; otherwise the error says "model_call_id or both model_ref and
// response_id are required". A set ModelRef must itself be valid.
func (r ModelCallRef) Validate() error { return wrapValidation("model call ref", r.validate()) }

// Validate always returns nil: any code, invocation id and detail form a valid gap (SPEC §6.2).
func (g ObservationGap) Validate() error { return wrapValidation("gap", g.validate()) }

// Validate reports whether a satisfies SPEC §6.2: Status is completed, failed, incomplete, unknown
// or "" (the default); DurationMS, when set, is finite and >= 0; every reference in ModelCalls is
// valid ([ModelCallRef.Validate]); every Conversation item is one strict JSON object. All problems
// are reported, joined, each naming its field.
func (a AgentInvocation) Validate() error { return wrapValidation(KindAgentInvocation, a.validate()) }

// Validate reports whether t satisfies SPEC §6.2: Status is completed, failed, timeout, cancelled,
// incomplete, unknown or ""; TimingSource, when set, is executor, artifact or harness; StartedAt and
// CompletedAt, when set, are finite, and when both are set "completed_at must not precede
// started_at"; DurationMS, when set, is finite and >= 0.
func (t ToolCallObservation) Validate() error { return wrapValidation(KindToolCall, t.validate()) }

// Validate reports whether c satisfies SPEC §6.2: ObservedAt, when set, is finite; TokensBefore and
// TokensAfter, when set, are >= 0 (TokensAfter may exceed TokensBefore); Outcome is completed,
// failed, aborted, unknown or ""; BeforeModelCall, ModelCalls and AfterModelCall are valid
// references.
func (c ContextCompactionObservation) Validate() error {
	return wrapValidation(KindContextCompaction, c.validate())
}

// Validate reports whether s satisfies SPEC §6.2: Role is agent, verifier or environment (required);
// Outcome is completed, failed, timeout, oom, sandbox_error, cancelled, unknown or ""; WallTimeS,
// CPUTimeS and PeakMemoryMiB, when set, are finite and >= 0.
func (s SandboxObservation) Validate() error { return wrapValidation(KindSandbox, s.validate()) }

// Validate reports whether b satisfies SPEC §6.2: every record is non-nil and valid; invocation ids
// are unique among the AgentInvocations ("invocation_id must be unique within an observation
// bundle"); following parent_invocation_id among the invocations present never comes back to an
// invocation already on the path ("parent_invocation_id must not form a cycle"; a self-parent is a
// cycle), while a parent that is not present ends the path and is allowed. Errors name the record
// by its index, e.g. "agentobs: bundle: records[2]: duration_ms: -1.0 must be greater than or
// equal to 0".
func (b AgentObservationBundle) Validate() error { return wrapValidation("bundle", b.validate()) }

func wrapValidation(what string, err error) error {
	if err == nil {
		return nil
	}
	return errorf("%s: %w", what, err)
}
