package agentobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/gymtrace/gymtrace/ojson"
)

// Every JSON object of this package lists its keys once, in Gym's field order (SPEC §5.6, §6.2),
// as a table of fields that point into the Go value. Encoding (encode.go), decoding (decode.go),
// validation (validate.go) and deep copy (clone.go) walk that table.

// field is one JSON key and a pointer to the Go field it maps. ptr is one of:
//
//	*string            a required string; an enum when enum is set (def is its default, "" = required)
//	**string, **float64, **int, **bool, **TimingSource, **ModelServerRef, **ModelCallRef  nullable
//	*int, *float64     a required number (null is not allowed)
//	*json.RawMessage   any JSON value (nil = null)
//	*[]json.RawMessage a list of JSON objects
//	*[]ModelCallRef    a list of model-call references
//	fielder            a nested object with its own table
type field struct {
	key  string
	ptr  any
	enum []string
	def  string
	min0 bool // a nullable number must be >= 0 (pydantic's ge=0)
}

// fielder is a value with a field table.
type fielder interface{ fields() []field }

// The enum literals of SPEC §6.2.
var (
	invocationStatuses = []string{"completed", "failed", "incomplete", "unknown"}
	toolCallStatuses   = []string{"completed", "failed", "timeout", "cancelled", "incomplete", "unknown"}
	timingSources      = []string{"executor", "artifact", "harness"}
	compactionOutcomes = []string{"completed", "failed", "aborted", "unknown"}
	sandboxRoles       = []string{"agent", "verifier", "environment"}
	sandboxOutcomes    = []string{"completed", "failed", "timeout", "oom", "sandbox_error", "cancelled", "unknown"}
)

func (r *ModelCallRef) fields() []field {
	return []field{
		{key: "model_call_id", ptr: &r.ModelCallID},
		{key: "model_ref", ptr: &r.ModelRef},
		{key: "response_id", ptr: &r.ResponseID},
	}
}

func (g *ObservationGap) fields() []field {
	return []field{
		{key: "code", ptr: &g.Code},
		{key: "invocation_id", ptr: &g.InvocationID},
		{key: "detail", ptr: &g.Detail},
	}
}

func (a *AgentInvocation) fields() []field {
	return []field{
		{key: "invocation_id", ptr: &a.InvocationID},
		{key: "parent_invocation_id", ptr: &a.ParentInvocationID},
		{key: "spawned_by_tool_call_id", ptr: &a.SpawnedByToolCallID},
		{key: "status", ptr: (*string)(&a.Status), enum: invocationStatuses, def: string(InvocationStatusUnknown)},
		{key: "duration_ms", ptr: &a.DurationMS, min0: true},
		{key: "error_type", ptr: &a.ErrorType},
		{key: "model_calls", ptr: &a.ModelCalls},
		{key: "conversation", ptr: &a.Conversation},
	}
}

func (t *ToolCallObservation) fields() []field {
	return []field{
		{key: "invocation_id", ptr: &t.InvocationID},
		{key: "tool_call_id", ptr: &t.ToolCallID},
		{key: "sandbox_id", ptr: &t.SandboxID},
		{key: "tool_name", ptr: &t.ToolName},
		{key: "started_at", ptr: &t.StartedAt},
		{key: "completed_at", ptr: &t.CompletedAt},
		{key: "duration_ms", ptr: &t.DurationMS, min0: true},
		{key: "timing_source", ptr: &t.TimingSource, enum: timingSources},
		{key: "status", ptr: (*string)(&t.Status), enum: toolCallStatuses, def: string(ToolCallStatusUnknown)},
		{key: "error_type", ptr: &t.ErrorType},
	}
}

func (c *ContextCompactionObservation) fields() []field {
	return []field{
		{key: "invocation_id", ptr: &c.InvocationID},
		{key: "observed_at", ptr: &c.ObservedAt},
		{key: "trigger", ptr: &c.Trigger},
		{key: "tokens_before", ptr: &c.TokensBefore, min0: true},
		{key: "tokens_after", ptr: &c.TokensAfter, min0: true},
		{key: "outcome", ptr: (*string)(&c.Outcome), enum: compactionOutcomes, def: string(CompactionOutcomeUnknown)},
		{key: "summary", ptr: &c.Summary},
		{key: "first_kept_item_id", ptr: &c.FirstKeptItemID},
		{key: "before_model_call", ptr: &c.BeforeModelCall},
		{key: "model_calls", ptr: &c.ModelCalls},
		{key: "after_model_call", ptr: &c.AfterModelCall},
	}
}

func (s *SandboxObservation) fields() []field {
	return []field{
		{key: "role", ptr: (*string)(&s.Role), enum: sandboxRoles},
		{key: "provider", ptr: &s.Provider},
		{key: "sandbox_id", ptr: &s.SandboxID},
		{key: "outcome", ptr: (*string)(&s.Outcome), enum: sandboxOutcomes, def: string(SandboxOutcomeUnknown)},
		{key: "exit_code", ptr: &s.ExitCode},
		{key: "wall_time_s", ptr: &s.WallTimeS, min0: true},
		{key: "cpu_time_s", ptr: &s.CPUTimeS, min0: true},
		{key: "peak_memory_mib", ptr: &s.PeakMemoryMiB, min0: true},
		{key: "resource_usage_source", ptr: &s.ResourceUsageSource},
		{key: "error_type", ptr: &s.ErrorType},
	}
}

// appendFields writes the object of table fs, "kind" first when kind is set.
func appendFields(dst []byte, kind string, fs []field) ([]byte, error) {
	dst = append(dst, '{')
	if kind != "" {
		dst = append(dst, `"kind":`...)
		dst = ojson.AppendString(dst, kind)
	}
	for i, f := range fs {
		if i > 0 || kind != "" {
			dst = append(dst, ',')
		}
		dst = ojson.AppendString(dst, f.key)
		dst = append(dst, ':')
		var err error
		if dst, err = f.appendValue(dst); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func (f field) appendValue(dst []byte) ([]byte, error) {
	switch p := f.ptr.(type) {
	case *string:
		return ojson.AppendString(dst, orDefault(*p, f.def)), nil
	case **string:
		return appendNullable(dst, *p, ojson.AppendString), nil
	case **float64:
		return appendNullable(dst, *p, ojson.AppendFloat), nil
	case *float64:
		return ojson.AppendFloat(dst, *p), nil
	case **int:
		return appendNullable(dst, *p, appendInt), nil
	case *int:
		return appendInt(dst, *p), nil
	case **bool:
		return appendNullable(dst, *p, strconv.AppendBool), nil
	case **TimingSource:
		return appendNullable(dst, *p, func(d []byte, s TimingSource) []byte { return ojson.AppendString(d, string(s)) }), nil
	case **ModelServerRef:
		return appendNullable(dst, *p, func(d []byte, m ModelServerRef) []byte { return m.appendJSON(d) }), nil
	case **ModelCallRef:
		return appendNullable(dst, *p, func(d []byte, r ModelCallRef) []byte { return r.appendJSON(d) }), nil
	case *[]ModelCallRef:
		return appendRefs(dst, *p), nil
	case *json.RawMessage:
		if *p == nil {
			return append(dst, "null"...), nil
		}
		out, err := ojson.Compact(dst, *p)
		if err != nil {
			return dst, errorf("%s: %w", f.key, err)
		}
		return out, nil
	case *[]json.RawMessage:
		dst = append(dst, '[')
		for i, item := range *p {
			if i > 0 {
				dst = append(dst, ',')
			}
			n := len(dst)
			var err error
			if dst, err = ojson.Compact(dst, item); err != nil {
				return dst, fmt.Errorf("%s: %w", indexPath(f.key, i), err)
			}
			if dst[n] != '{' {
				return dst, fmt.Errorf("%s: not a JSON object", indexPath(f.key, i))
			}
		}
		return append(dst, ']'), nil
	case fielder:
		return appendFields(dst, "", p.fields())
	}
	return dst, fmt.Errorf("%s: unsupported field type %T", f.key, f.ptr)
}

func appendNullable[T any](dst []byte, p *T, write func([]byte, T) []byte) []byte {
	if p == nil {
		return append(dst, "null"...)
	}
	return write(dst, *p)
}

func appendInt(dst []byte, n int) []byte { return strconv.AppendInt(dst, int64(n), 10) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// decodeFields decodes the object v (at path) into table fs, following the rules of decode.go;
// "kind", when set, is allowed and must equal kind.
func decodeFields(v ojson.Value, path, kind string, fs []field) error {
	keys := make([]string, 0, len(fs)+1)
	if kind != "" {
		keys = append(keys, "kind")
	}
	for _, f := range fs {
		keys = append(keys, f.key)
	}
	o, err := newObj(v, path, false, keys...)
	if err != nil {
		return err
	}
	if kind != "" {
		o.kind(kind)
	}
	for _, f := range fs {
		o.read(f)
	}
	return o.err()
}

// read decodes one field of the table.
func (o *obj) read(f field) {
	v, present := o.get(f.key)
	switch p := f.ptr.(type) {
	case *string:
		switch {
		case f.enum == nil:
			*p = o.reqStr(f.key)
		case f.def == "" && !present:
			o.fail(f.key, errors.New("field required"))
		default:
			*p = o.enum(f.key, f.def, f.enum...)
		}
	case **string:
		*p = o.optStr(f.key)
	case **float64:
		*p = o.optFloat(f.key)
	case **int:
		*p = o.optInt(f.key)
	case *float64:
		if q := required(o, f.key, o.optFloat); q != nil {
			*p = *q
		}
	case *int:
		if q := required(o, f.key, o.optInt); q != nil {
			*p = *q
		}
	case **bool:
		if present && !v.IsNull() {
			if b, ok := v.AsBool(); ok {
				*p = &b
			} else {
				o.fail(f.key, fmt.Errorf("a JSON %s, not a bool or null", v.Kind()))
			}
		}
	case **TimingSource:
		if present && !v.IsNull() {
			if s := o.enum(f.key, "", f.enum...); s != "" {
				*p = Ptr(TimingSource(s))
			}
		}
	case **ModelServerRef:
		*p = optObject(o, f.key, decodeModelServerRef)
	case **ModelCallRef:
		*p = optObject(o, f.key, decodeModelCallRef)
	case *[]ModelCallRef:
		*p = list(o, f.key, decodeModelCallRef)
	case *json.RawMessage:
		if present && !v.IsNull() {
			*p = json.RawMessage(v.AppendJSON(nil))
		}
	case *[]json.RawMessage:
		*p = list(o, f.key, decodeConversationItem)
	case fielder:
		if present {
			o.errs = append(o.errs, decodeFields(v, joinPath(o.path, f.key), "", p.fields()))
		}
	default:
		o.fail(f.key, fmt.Errorf("unsupported field type %T", f.ptr))
	}
}

// optObject reads a nullable object with decode (missing or null → nil).
func optObject[T any](o *obj, key string, decode func(ojson.Value, string) (T, error)) *T {
	v, ok := o.get(key)
	if !ok || v.IsNull() {
		return nil
	}
	x, err := decode(v, joinPath(o.path, key))
	if err != nil {
		o.errs = append(o.errs, err)
		return nil
	}
	return &x
}

// validateFields checks the rules a table states: enum literals, finite numbers, ge=0, nested
// references and objects, JSON text. Each error names its field.
func validateFields(fs []field) []error {
	var errs []error
	for _, f := range fs {
		switch p := f.ptr.(type) {
		case *string:
			if f.enum != nil && !(*p == "" && f.def != "") && !slices.Contains(f.enum, *p) {
				errs = append(errs, enumError(f.key, *p, f.enum...))
			}
		case **TimingSource:
			if *p != nil && !slices.Contains(f.enum, string(**p)) {
				errs = append(errs, enumError(f.key, string(**p), f.enum...))
			}
		case **float64:
			if f.min0 {
				errs = append(errs, nonNegative(f.key, *p))
			} else {
				errs = append(errs, finite(f.key, *p))
			}
		case *float64:
			errs = append(errs, finite(f.key, p))
		case **int:
			if f.min0 && *p != nil && **p < 0 {
				errs = append(errs, fieldError(f.key, fmt.Errorf("%d must be greater than or equal to 0", **p)))
			}
		case **ModelServerRef:
			if *p != nil {
				errs = append(errs, fieldError(f.key, (*p).validate()))
			}
		case **ModelCallRef:
			if *p != nil {
				errs = append(errs, fieldError(f.key, (*p).validate()))
			}
		case *[]ModelCallRef:
			errs = append(errs, validateRefs(f.key, *p)...)
		case *json.RawMessage:
			errs = append(errs, validJSON(f.key, *p))
		case *[]json.RawMessage:
			for i, item := range *p {
				v, err := ojson.Parse(item)
				if err == nil && v.Kind() != ojson.KindObject {
					err = fmt.Errorf("a JSON %s, not an object", v.Kind())
				}
				errs = append(errs, fieldError(indexPath(f.key, i), err))
			}
		case fielder:
			errs = append(errs, fieldError(f.key, errors.Join(validateFields(p.fields())...)))
		}
	}
	return errs
}

// cloneFields replaces every pointer, slice and JSON text of table fs by a copy.
func cloneFields(fs []field) {
	for _, f := range fs {
		switch p := f.ptr.(type) {
		case **string:
			*p = clonePtr(*p)
		case **float64:
			*p = clonePtr(*p)
		case **int:
			*p = clonePtr(*p)
		case **bool:
			*p = clonePtr(*p)
		case **TimingSource:
			*p = clonePtr(*p)
		case **ModelServerRef:
			*p = clonePtr(*p)
		case **ModelCallRef:
			*p = cloneWith(*p, ModelCallRef.Clone)
		case *[]ModelCallRef:
			*p = cloneSlice(*p, ModelCallRef.Clone)
		case *json.RawMessage:
			*p = bytes.Clone(*p)
		case *[]json.RawMessage:
			*p = cloneSlice(*p, func(m json.RawMessage) json.RawMessage { return bytes.Clone(m) })
		case fielder:
			cloneFields(p.fields())
		}
	}
}
