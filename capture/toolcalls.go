package capture

import (
	"encoding/json"
	"iter"
	"strings"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// ToolCall is one tool call the model made, as SPEC §3.6 extracts it. Each field is compact JSON
// text of ANY JSON value, because the reference copies them from the response unchecked: CallID
// and Name are usually strings but may be null or anything the provider sent; Arguments is usually
// an object but may be any value (a JSON string argument that parses to a list gives that list).
// Dumped with keys call_id, name, arguments in that order. The texts may share the memory of the
// line they were read from: never modify them.
type ToolCall struct {
	CallID    json.RawMessage
	Name      json.RawMessage
	Arguments json.RawMessage
}

func (tc *ToolCall) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"call_id":`...)
	dst = appendRaw(dst, tc.CallID)
	dst = append(dst, `,"name":`...)
	dst = appendRaw(dst, tc.Name)
	dst = append(dst, `,"arguments":`...)
	dst = appendRaw(dst, tc.Arguments)
	return append(dst, '}')
}

func newToolCall(callID, name ojson.Value, args json.RawMessage) ToolCall {
	return ToolCall{CallID: encodedText(callID), Name: encodedText(name), Arguments: args}
}

// encodedText is v's JSON text as the record writes it ([ojson.Value.AppendJSON]): the text of the
// line itself when it already is that ([ojson.Value.EncodedText]), else encoded into a buffer of
// its own.
func encodedText(v ojson.Value) json.RawMessage {
	if text, ok := v.EncodedText(); ok {
		return text
	}
	return v.AppendJSON(make([]byte, 0, v.SizeHint()))
}

// get is Python's d.get(key): the value, or null when missing (or when d is not an object).
func get(d ojson.Value, key string) ojson.Value {
	v, _ := d.Get(key)
	return v
}

// or is Python's `a or b`.
func or(a, b ojson.Value) ojson.Value {
	if python.Truthy(a) {
		return a
	}
	return b
}

// iterOrEmpty returns the objects Python's `for x in (v or [])` would visit. Iterating a string
// (characters) or an object (keys) never yields an object, so those give nothing; iterating a
// truthy number or boolean raises TypeError in the reference, which makes the record unbuildable.
// The elements are read one at a time ([ojson.Value.Elements]), never all built at once.
func iterOrEmpty(v ojson.Value, what string) (iter.Seq[ojson.Value], error) {
	switch v.Kind() {
	case ojson.KindArray:
		return v.Elements(), nil
	case ojson.KindNumber, ojson.KindBool:
		if python.Truthy(v) {
			return nil, errorf("%s: TypeError: '%s' object is not iterable", what, python.TypeName(v))
		}
	}
	return func(func(ojson.Value) bool) {}, nil
}

// argumentsText is the JSON text of the reference's _as_arguments (SPEC §3.6 args): an object as
// is; a string parsed with Python json.loads semantics (any JSON value), or {"_raw": s} when that
// fails (including ""); anything else {}. A string is read without a tree ([python.LoadsText]):
// its own text when json.loads and orjson give it back unchanged, else re-encoded in one pass.
func argumentsText(v ojson.Value) json.RawMessage {
	switch v.Kind() {
	case ojson.KindObject:
		return encodedText(v)
	case ojson.KindString:
		s, _ := v.AsString()
		if text, err := python.LoadsText(s); err == nil {
			return text
		}
		return ojson.Object(ojson.Member{Key: "_raw", Value: v}).AppendJSON(nil)
	}
	return json.RawMessage("{}")
}

// joinReasoning is `"\n".join(parts) or None`.
func joinReasoning(parts []string) *string {
	s := strings.Join(parts, "\n")
	if s == "" {
		return nil
	}
	return &s
}

// toolCallsAndReasoning is the reference's _tool_calls_and_reasoning (SPEC §3.6): shape-driven,
// the first matching shape wins — output list (Responses), choices list (Chat), content list
// (Anthropic) — else no tool calls and no reasoning. The only error is the reference's TypeError on
// iterating a truthy number or boolean (a reasoning summary, or a chat message's tool_calls), which
// makes the record unbuildable (SPEC §9 #10).
func toolCallsAndReasoning(response ojson.Value) ([]ToolCall, *string, error) {
	calls := []ToolCall{}
	var reasoning []string

	if output := get(response, "output"); output.Kind() == ojson.KindArray { // Responses
		for item := range output.Elements() {
			if item.Kind() != ojson.KindObject {
				continue
			}
			typ, _ := get(item, "type").AsString()
			switch typ {
			case "function_call":
				calls = append(calls, newToolCall(
					or(get(item, "call_id"), get(item, "id")),
					get(item, "name"),
					argumentsText(get(item, "arguments")),
				))
			case "reasoning":
				summaries, err := iterOrEmpty(get(item, "summary"), "output[].summary")
				if err != nil {
					return nil, nil, err
				}
				for sm := range summaries {
					if sm.Kind() != ojson.KindObject {
						continue
					}
					if text, ok := get(sm, "text").AsString(); ok && text != "" {
						reasoning = append(reasoning, text)
					}
				}
			}
		}
		return calls, joinReasoning(reasoning), nil
	}

	if choices := get(response, "choices"); choices.Kind() == ojson.KindArray { // Chat Completions
		for choice := range choices.Elements() {
			if choice.Kind() != ojson.KindObject {
				continue
			}
			message := get(choice, "message")
			if message.Kind() != ojson.KindObject {
				continue
			}
			tcs, err := iterOrEmpty(get(message, "tool_calls"), "choices[].message.tool_calls")
			if err != nil {
				return nil, nil, err
			}
			for tc := range tcs {
				if tc.Kind() != ojson.KindObject {
					continue
				}
				fn := or(get(tc, "function"), ojson.Object())
				if fn.Kind() != ojson.KindObject {
					fn = ojson.Object()
				}
				calls = append(calls, newToolCall(get(tc, "id"), get(fn, "name"), argumentsText(get(fn, "arguments"))))
			}
			text := or(get(message, "reasoning_content"), get(message, "reasoning"))
			if s, ok := text.AsString(); ok && s != "" {
				reasoning = append(reasoning, s)
			}
		}
		return calls, joinReasoning(reasoning), nil
	}

	if content := get(response, "content"); content.Kind() == ojson.KindArray { // Anthropic Messages
		for block := range content.Elements() {
			if block.Kind() != ojson.KindObject {
				continue
			}
			typ, _ := get(block, "type").AsString()
			switch typ {
			case "tool_use":
				calls = append(calls, newToolCall(get(block, "id"), get(block, "name"), encodedText(or(get(block, "input"), ojson.Object()))))
			case "thinking", "redacted_thinking":
				if s, ok := get(block, "thinking").AsString(); ok {
					reasoning = append(reasoning, s)
				}
			}
		}
		return calls, joinReasoning(reasoning), nil
	}

	return calls, nil, nil
}
