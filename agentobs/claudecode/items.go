package claudecode

import (
	"encoding/json"

	"github.com/gymtrace/gymtrace/ojson"
)

// The conversation items the extractor emits, as Gym dumps its OpenAI item models in JSON mode
// (SPEC §6.7): compact JSON objects, keys in the models' declared order, strings encoded like
// orjson ([ojson.AppendString]).

// inputMessageItem is a user/system/developer text message:
// {"content":<str>,"role":<role>,"type":"message"}.
func inputMessageItem(role, text string) json.RawMessage {
	return item(member("content", str(text)), member("role", str(role)), member("type", str("message")))
}

// outputMessageItem is an assistant text block:
// {"id":<id>,"content":[{"annotations":[],"text":<str>,"type":"output_text","logprobs":null}],
// "role":"assistant","status":"completed","type":"message"}.
func outputMessageItem(id, text string) json.RawMessage {
	content := ojson.Object(member("annotations", ojson.Array()), member("text", str(text)),
		member("type", str("output_text")), member("logprobs", ojson.Null()))
	return item(member("id", str(id)), member("content", ojson.Array(content)), member("role", str("assistant")),
		member("status", str("completed")), member("type", str("message")))
}

// reasoningItem is a thinking block:
// {"id":<id>,"summary":[{"text":<str>,"type":"summary_text"}],"type":"reasoning",
// "encrypted_content":<signature|null>,"content":null}.
func reasoningItem(id, text string, signature *string) json.RawMessage {
	encrypted := ojson.Null()
	if signature != nil {
		encrypted = str(*signature)
	}
	summary := ojson.Object(member("text", str(text)), member("type", str("summary_text")))
	return item(member("id", str(id)), member("summary", ojson.Array(summary)), member("type", str("reasoning")),
		member("encrypted_content", encrypted), member("content", ojson.Null()))
}

// functionCallItem is a tool_use block:
// {"arguments":<json text>,"call_id":<id>,"name":<str>,"type":"function_call","id":<id>,"status":"completed"}.
func functionCallItem(id, name, arguments string) json.RawMessage {
	return item(member("arguments", str(arguments)), member("call_id", str(id)), member("name", str(name)),
		member("type", str("function_call")), member("id", str(id)), member("status", str("completed")))
}

// functionCallOutputItem is a tool_result block:
// {"call_id":<id>,"output":<str>,"type":"function_call_output","id":null,"status":"completed"|"incomplete"}.
func functionCallOutputItem(callID, output string, completed bool) json.RawMessage {
	status := "incomplete"
	if completed {
		status = "completed"
	}
	return item(member("call_id", str(callID)), member("output", str(output)),
		member("type", str("function_call_output")), member("id", ojson.Null()), member("status", str(status)))
}

// item writes the object of members ms.
func item(ms ...ojson.Member) json.RawMessage { return ojson.Object(ms...).AppendJSON(nil) }

func member(key string, v ojson.Value) ojson.Member { return ojson.Member{Key: key, Value: v} }

var str = ojson.String
