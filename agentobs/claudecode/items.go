package claudecode

import (
	"encoding/json"

	"github.com/gymtrace/gymtrace/internal/ojson"
)

// The conversation items the extractor emits, as Gym dumps its OpenAI item models in JSON mode
// (SPEC §6.7): compact JSON objects, keys in the models' declared order, strings encoded like
// orjson ([ojson.AppendString]).

// inputMessageItem is a user/system/developer text message:
// {"content":<str>,"role":<role>,"type":"message"}.
func inputMessageItem(role, text string) json.RawMessage {
	b := append([]byte(`{"content":`), ojson.AppendString(nil, text)...)
	b = append(b, `,"role":`...)
	b = ojson.AppendString(b, role)
	return append(b, `,"type":"message"}`...)
}

// outputMessageItem is an assistant text block:
// {"id":<id>,"content":[{"annotations":[],"text":<str>,"type":"output_text","logprobs":null}],
// "role":"assistant","status":"completed","type":"message"}.
func outputMessageItem(id, text string) json.RawMessage {
	b := append([]byte(`{"id":`), ojson.AppendString(nil, id)...)
	b = append(b, `,"content":[{"annotations":[],"text":`...)
	b = ojson.AppendString(b, text)
	return append(b, `,"type":"output_text","logprobs":null}],"role":"assistant","status":"completed","type":"message"}`...)
}

// reasoningItem is a thinking block:
// {"id":<id>,"summary":[{"text":<str>,"type":"summary_text"}],"type":"reasoning",
// "encrypted_content":<signature|null>,"content":null}.
func reasoningItem(id, text string, signature *string) json.RawMessage {
	b := append([]byte(`{"id":`), ojson.AppendString(nil, id)...)
	b = append(b, `,"summary":[{"text":`...)
	b = ojson.AppendString(b, text)
	b = append(b, `,"type":"summary_text"}],"type":"reasoning","encrypted_content":`...)
	if signature != nil {
		b = ojson.AppendString(b, *signature)
	} else {
		b = append(b, "null"...)
	}
	return append(b, `,"content":null}`...)
}

// functionCallItem is a tool_use block:
// {"arguments":<json text>,"call_id":<id>,"name":<str>,"type":"function_call","id":<id>,"status":"completed"}.
func functionCallItem(id, name, arguments string) json.RawMessage {
	b := append([]byte(`{"arguments":`), ojson.AppendString(nil, arguments)...)
	b = append(b, `,"call_id":`...)
	b = ojson.AppendString(b, id)
	b = append(b, `,"name":`...)
	b = ojson.AppendString(b, name)
	b = append(b, `,"type":"function_call","id":`...)
	b = ojson.AppendString(b, id)
	return append(b, `,"status":"completed"}`...)
}

// functionCallOutputItem is a tool_result block:
// {"call_id":<id>,"output":<str>,"type":"function_call_output","id":null,"status":"completed"|"incomplete"}.
func functionCallOutputItem(callID, output string, completed bool) json.RawMessage {
	b := append([]byte(`{"call_id":`), ojson.AppendString(nil, callID)...)
	b = append(b, `,"output":`...)
	b = ojson.AppendString(b, output)
	b = append(b, `,"type":"function_call_output","id":null,"status":`...)
	if completed {
		return append(b, `"completed"}`...)
	}
	return append(b, `"incomplete"}`...)
}
