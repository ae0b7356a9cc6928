package agentobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/gymtrace/gymtrace/ojson"
)

// Decoding follows Gym's pydantic models (SPEC §6.1, §6.2) with extra="forbid":
//   - the input is strict JSON (RFC 8259, UTF-8; see ojson.Parse); a key given twice counts once,
//     with its last value, as Python's json.loads reads it;
//   - an unknown key is an error naming it ([ModelServerRef] ignores extra keys);
//   - a missing required key is an error; a missing optional key takes its default (null, [] or
//     "unknown"); null is accepted only where the SPEC says "|null";
//   - strings must be JSON strings; a float field takes any JSON number (10 becomes 10.0); an int
//     field takes a JSON integer, or a number with no fractional part (1e2, 10.0), within int64.
//     Unlike pydantic's lax mode, gymtrace does not turn numeric strings or booleans into numbers:
//     every producer writes numbers;
//   - enum values must be one of the SPEC's literals;
//   - records of a bundle must carry a "kind" naming one of the four record types;
//   - empty lists decode as nil slices.
// After decoding, the value's Validate runs, so whatever decodes is valid. Errors name the field
// by its path, e.g. records[0].model_calls[1].producer_extension.

// DecodeBundle decodes and validates one ng_agent_observations value (SPEC §5.4, §6.2), following
// the rules above. The error wraps the first problems found (all unknown or mistyped fields of the
// input, or the validation errors).
func DecodeBundle(data []byte) (AgentObservationBundle, error) {
	var b AgentObservationBundle
	if err := b.UnmarshalJSON(data); err != nil {
		return AgentObservationBundle{}, err
	}
	return b, nil
}

// parseDocument parses data strictly and collapses duplicate keys like Python's json.loads.
func parseDocument(data []byte) (ojson.Value, error) {
	v, err := ojson.Parse(data)
	if err != nil {
		return ojson.Value{}, err
	}
	return v.CollapseDuplicates(), nil
}

// unmarshal is the body of every UnmarshalJSON: parse, decode with fn, validate, and store in dst
// only when all three succeed.
func unmarshal[T any](dst *T, data []byte, what string, decode func(ojson.Value, string) (T, error), validate func(T) error) error {
	v, err := parseDocument(data)
	if err != nil {
		return errorf("decode %s: %w", what, err)
	}
	out, err := decode(v, "")
	if err == nil {
		err = validate(out)
	}
	if err != nil {
		return errorf("decode %s: %w", what, err)
	}
	*dst = out
	return nil
}

// UnmarshalJSON decodes and validates a bundle (see [DecodeBundle]). On error b is unchanged.
func (b *AgentObservationBundle) UnmarshalJSON(data []byte) error {
	return unmarshal(b, data, "bundle", decodeBundle, AgentObservationBundle.validate)
}

// UnmarshalJSON decodes a model server reference: required string keys type (which must be
// "responses_api_models") and name; other keys are ignored. On error m is unchanged.
func (m *ModelServerRef) UnmarshalJSON(data []byte) error {
	return unmarshal(m, data, "model_ref", decodeModelServerRef, ModelServerRef.validate)
}

// UnmarshalJSON decodes and validates a model-call reference. On error r is unchanged.
func (r *ModelCallRef) UnmarshalJSON(data []byte) error {
	return unmarshal(r, data, "model call ref", decodeModelCallRef, ModelCallRef.validate)
}

// UnmarshalJSON decodes a gap: required string code, nullable strings invocation_id and detail.
// On error g is unchanged.
func (g *ObservationGap) UnmarshalJSON(data []byte) error {
	return unmarshal(g, data, "gap", decodeGap, ObservationGap.validate)
}

// UnmarshalJSON decodes and validates an invocation; "kind", when present, must be
// "agent_invocation". On error a is unchanged.
func (a *AgentInvocation) UnmarshalJSON(data []byte) error {
	return unmarshal(a, data, KindAgentInvocation, decodeInvocation, AgentInvocation.validate)
}

// UnmarshalJSON decodes and validates a tool call; "kind", when present, must be "tool_call". An
// "output" key is rejected like any unknown key (SPEC §6.2). On error t is unchanged.
func (t *ToolCallObservation) UnmarshalJSON(data []byte) error {
	return unmarshal(t, data, KindToolCall, decodeToolCall, ToolCallObservation.validate)
}

// UnmarshalJSON decodes and validates a compaction; "kind", when present, must be
// "context_compaction". On error c is unchanged.
func (c *ContextCompactionObservation) UnmarshalJSON(data []byte) error {
	return unmarshal(c, data, KindContextCompaction, decodeCompaction, ContextCompactionObservation.validate)
}

// UnmarshalJSON decodes and validates a sandbox observation; "kind", when present, must be
// "sandbox"; "role" is required. On error s is unchanged.
func (s *SandboxObservation) UnmarshalJSON(data []byte) error {
	return unmarshal(s, data, KindSandbox, decodeSandbox, SandboxObservation.validate)
}

// obj reads the members of one JSON object, collecting every error.
type obj struct {
	path string
	m    map[string]ojson.Value
	errs []error
}

// newObj checks that v is an object and that it has only the allowed keys (unless ignoreExtra).
// A nil *obj with an error means v is not an object.
func newObj(v ojson.Value, path string, ignoreExtra bool, allowed ...string) (*obj, error) {
	if v.Kind() != ojson.KindObject {
		return nil, pathError(path, fmt.Errorf("a JSON %s, not an object", v.Kind()))
	}
	o := &obj{path: path, m: make(map[string]ojson.Value, len(allowed))}
	for _, mem := range v.Members() {
		known := false
		for _, a := range allowed {
			if a == mem.Key {
				known = true
				break
			}
		}
		if !known {
			if !ignoreExtra {
				o.errs = append(o.errs, pathError(joinPath(path, mem.Key), errors.New("unknown field (extra inputs are not permitted)")))
			}
			continue
		}
		o.m[mem.Key] = mem.Value
	}
	return o, nil
}

func (o *obj) fail(key string, err error) {
	o.errs = append(o.errs, pathError(joinPath(o.path, key), err))
}

func (o *obj) err() error { return errors.Join(o.errs...) }

// get returns the member and whether it is present.
func (o *obj) get(key string) (ojson.Value, bool) {
	v, ok := o.m[key]
	return v, ok
}

// reqStr reads a required string.
func (o *obj) reqStr(key string) string {
	v, ok := o.get(key)
	if !ok {
		o.fail(key, errors.New("field required"))
		return ""
	}
	s, ok := v.AsString()
	if !ok {
		o.fail(key, fmt.Errorf("a JSON %s, not a string", v.Kind()))
	}
	return s
}

// optStr reads an Optional[str] (missing or null → nil).
func (o *obj) optStr(key string) *string {
	v, ok := o.get(key)
	if !ok || v.IsNull() {
		return nil
	}
	s, ok := v.AsString()
	if !ok {
		o.fail(key, fmt.Errorf("a JSON %s, not a string or null", v.Kind()))
		return nil
	}
	return &s
}

// optFloat reads an Optional[float]: any JSON number within the float64 range.
func (o *obj) optFloat(key string) *float64 {
	v, ok := o.get(key)
	if !ok || v.IsNull() {
		return nil
	}
	text, ok := v.NumberText()
	if !ok {
		o.fail(key, fmt.Errorf("a JSON %s, not a number or null", v.Kind()))
		return nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		o.fail(key, fmt.Errorf("%s is out of the float64 range", text))
		return nil
	}
	return &f
}

// optInt reads an Optional[int]: a JSON integer, or a number without a fractional part, within int64.
func (o *obj) optInt(key string) *int {
	v, ok := o.get(key)
	if !ok || v.IsNull() {
		return nil
	}
	text, ok := v.NumberText()
	if !ok {
		o.fail(key, fmt.Errorf("a JSON %s, not an integer or null", v.Kind()))
		return nil
	}
	var n int64
	if v.IsInteger() {
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			o.fail(key, fmt.Errorf("integer %s is out of the int64 range", text))
			return nil
		}
		n = i
	} else {
		f, err := strconv.ParseFloat(text, 64)
		switch {
		case err != nil:
			o.fail(key, fmt.Errorf("%s is out of the float64 range", text))
			return nil
		case f != math.Trunc(f):
			o.fail(key, fmt.Errorf("%s has a fractional part, not an integer", text))
			return nil
		case f < math.MinInt64 || f >= math.MaxInt64:
			o.fail(key, fmt.Errorf("%s is out of the int64 range", text))
			return nil
		}
		n = int64(f)
	}
	if int64(int(n)) != n {
		o.fail(key, fmt.Errorf("%s does not fit in int", text))
		return nil
	}
	i := int(n)
	return &i
}

// enum reads a literal-valued string with a default (missing → def; null is an error).
func (o *obj) enum(key, def string, allowed ...string) string {
	v, ok := o.get(key)
	if !ok {
		return def
	}
	s, ok := v.AsString()
	if !ok {
		o.fail(key, fmt.Errorf("a JSON %s, not one of %q", v.Kind(), allowed))
		return def
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	o.fail(key, fmt.Errorf("%s is not one of %q", strconv.Quote(s), allowed))
	return def
}

// kind checks the optional literal "kind" of a record decoded on its own.
func (o *obj) kind(want string) {
	v, ok := o.get("kind")
	if !ok {
		return
	}
	if s, isStr := v.AsString(); !isStr || s != want {
		o.fail("kind", fmt.Errorf("%s is not %q", v, want))
	}
}

// list reads a list with a default of nil; elem decodes one element.
func list[T any](o *obj, key string, elem func(ojson.Value, string) (T, error)) []T {
	v, ok := o.get(key)
	if !ok {
		return nil
	}
	if v.Kind() != ojson.KindArray {
		o.fail(key, fmt.Errorf("a JSON %s, not an array", v.Kind()))
		return nil
	}
	var out []T
	for i, e := range v.Elems() {
		x, err := elem(e, indexPath(joinPath(o.path, key), i))
		if err != nil {
			o.errs = append(o.errs, err)
			continue
		}
		out = append(out, x)
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func pathError(path string, err error) error {
	if path == "" {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

func decodeModelServerRef(v ojson.Value, path string) (ModelServerRef, error) {
	o, err := newObj(v, path, true, "type", "name")
	if err != nil {
		return ModelServerRef{}, err
	}
	m := ModelServerRef{Type: o.reqStr("type"), Name: o.reqStr("name")}
	if len(o.errs) == 0 && m.Type != ModelRefTypeResponsesAPIModels {
		o.fail("type", fmt.Errorf("%s is not %q", strconv.Quote(m.Type), ModelRefTypeResponsesAPIModels))
	}
	return m, o.err()
}

// decodeAs decodes v (at path) into a new T through its field table; kind is its "kind" ("" for
// none).
func decodeAs[T any, P interface {
	*T
	fielder
}](v ojson.Value, path, kind string) (T, error) {
	var out T
	err := decodeFields(v, path, kind, P(&out).fields())
	return out, err
}

func decodeModelCallRef(v ojson.Value, path string) (ModelCallRef, error) {
	return decodeAs[ModelCallRef](v, path, "")
}

func decodeGap(v ojson.Value, path string) (ObservationGap, error) {
	return decodeAs[ObservationGap](v, path, "")
}

func decodeInvocation(v ojson.Value, path string) (AgentInvocation, error) {
	return decodeAs[AgentInvocation](v, path, KindAgentInvocation)
}

func decodeToolCall(v ojson.Value, path string) (ToolCallObservation, error) {
	return decodeAs[ToolCallObservation](v, path, KindToolCall)
}

func decodeCompaction(v ojson.Value, path string) (ContextCompactionObservation, error) {
	return decodeAs[ContextCompactionObservation](v, path, KindContextCompaction)
}

func decodeSandbox(v ojson.Value, path string) (SandboxObservation, error) {
	return decodeAs[SandboxObservation](v, path, KindSandbox)
}

func decodeConversationItem(v ojson.Value, path string) (json.RawMessage, error) {
	if v.Kind() != ojson.KindObject {
		return nil, pathError(path, fmt.Errorf("a JSON %s, not an object", v.Kind()))
	}
	return json.RawMessage(v.AppendJSON(nil)), nil
}

// decodeRecord dispatches on the required "kind" (the discriminator of SPEC §6.2).
func decodeRecord(v ojson.Value, path string) (Record, error) {
	if v.Kind() != ojson.KindObject {
		return nil, pathError(path, fmt.Errorf("a JSON %s, not an object", v.Kind()))
	}
	kv, ok := v.Get("kind")
	if !ok {
		return nil, pathError(joinPath(path, "kind"), errors.New("field required: a record needs a kind (agent_invocation, tool_call, context_compaction or sandbox)"))
	}
	kind, ok := kv.AsString()
	if !ok {
		return nil, pathError(joinPath(path, "kind"), fmt.Errorf("a JSON %s, not a string", kv.Kind()))
	}
	newRecord, ok := recordTypes[kind]
	if !ok {
		return nil, pathError(joinPath(path, "kind"), fmt.Errorf("unknown record kind %s (want agent_invocation, tool_call, context_compaction or sandbox)", strconv.Quote(kind)))
	}
	r := newRecord()
	return r, decodeFields(v, path, kind, r.fields())
}

// recordTypes makes an empty record of each kind.
var recordTypes = map[string]func() Record{
	KindAgentInvocation:   func() Record { return new(AgentInvocation) },
	KindToolCall:          func() Record { return new(ToolCallObservation) },
	KindContextCompaction: func() Record { return new(ContextCompactionObservation) },
	KindSandbox:           func() Record { return new(SandboxObservation) },
}

func decodeBundle(v ojson.Value, path string) (AgentObservationBundle, error) {
	o, err := newObj(v, path, false, "source", "records", "gaps")
	if err != nil {
		return AgentObservationBundle{}, err
	}
	b := AgentObservationBundle{
		Source:  o.reqStr("source"),
		Records: list(o, "records", decodeRecord),
		Gaps:    list(o, "gaps", decodeGap),
	}
	return b, o.err()
}
