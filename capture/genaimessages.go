package capture

import (
	"cmp"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// Message part types and roles of the GenAI conventions' input/output-messages JSON schemas.
const (
	partText             = "text"
	partToolCall         = "tool_call"
	partToolCallResponse = "tool_call_response"
	partReasoning        = "reasoning"
	partBlob             = "blob"
	partURI              = "uri"
	partFile             = "file"

	roleUser      = "user"
	roleAssistant = "assistant"
	roleTool      = "tool"

	// finishReasonError is the output message's finish_reason when the provider reported none.
	finishReasonError = "error"
)

// appendMessageAttributes adds the opt-in content attributes (DESIGN.md "Spans follow the GenAI
// conventions"), each a JSON string following the conventions' JSON schemas, each only when the
// payload has the shape the dialect defines:
//
//   - gen_ai.system_instructions: the system instructions given apart from the history — Responses
//     instructions (a string), Anthropic system (a string or text blocks) — as an array of parts;
//   - gen_ai.input.messages: the chat history — Chat messages, Responses input (a string is one user
//     message; function_call / reasoning items join an assistant message, function_call_output
//     items a "tool" message), Anthropic messages — each {"role", "parts", "name"?};
//   - gen_ai.output.messages: one message per choice — each Chat choice, the Responses output, the
//     Anthropic content — each {"role", "parts", "finish_reason"}; finish_reason is the provider's
//     own (Chat finish_reason, Anthropic stop_reason, Responses incomplete_details.reason; a completed
//     Responses output gives "tool_call" when it holds function calls, else "stop"), "error" when
//     there is none.
//
// Parts: text ("content"), tool_call ("id", "name", "arguments": parsed JSON when the provider sent
// a JSON string, else as sent), tool_call_response ("id", "response"), reasoning ("content": thinking
// text or the joined reasoning summaries), blob ("modality", "mime_type", base64 "content") for inline
// images, audio and documents, uri and file parts for referenced ones. A part or item the mapping does
// not know is passed through as it is (a generic part: it keeps its own "type").
func appendMessageAttributes(attrs []attribute.KeyValue, dialect string, req, resp *ojson.Value) []attribute.KeyValue {
	var system, input, output []ojson.Value
	switch dialect {
	case semconv.DialectChat:
		if req != nil {
			input = chatInputMessages(*req)
		}
		if resp != nil {
			output = chatOutputMessages(*resp)
		}
	case semconv.DialectResponses:
		if req != nil {
			system, input = responsesInputMessages(*req)
		}
		if resp != nil {
			output = responsesOutputMessages(*resp)
		}
	case semconv.DialectMessages:
		if req != nil {
			system, input = anthropicInputMessages(*req)
		}
		if resp != nil {
			output = anthropicOutputMessages(*resp)
		}
	}
	if system != nil {
		attrs = append(attrs, semconv.GenAISystemInstructions(jsonText(system)))
	}
	if input != nil {
		attrs = append(attrs, semconv.GenAIInputMessages(jsonText(input)))
	}
	if output != nil {
		attrs = append(attrs, semconv.GenAIOutputMessages(jsonText(output)))
	}
	return attrs
}

func jsonText(vs []ojson.Value) string { return string(ojson.Array(vs...).AppendJSON(nil)) }

func member(k string, v ojson.Value) ojson.Member { return ojson.Member{Key: k, Value: v} }

func textPart(s string) ojson.Value {
	return ojson.Object(member("type", ojson.String(partText)), member("content", ojson.String(s)))
}

func reasoningPart(s string) ojson.Value {
	return ojson.Object(member("type", ojson.String(partReasoning)), member("content", ojson.String(s)))
}

// toolCallPart builds a tool_call part; id is left out unless it is a string, arguments given as a
// JSON string are parsed when they are JSON.
func toolCallPart(id, name, args ojson.Value) ojson.Value {
	ms := []ojson.Member{member("type", ojson.String(partToolCall))}
	if id.Kind() == ojson.KindString {
		ms = append(ms, member("id", id))
	}
	ms = append(ms, member("name", name), member("arguments", jsonArguments(args)))
	return ojson.Object(ms...)
}

func jsonArguments(v ojson.Value) ojson.Value {
	if s, ok := v.AsString(); ok {
		if parsed, err := ojson.Parse([]byte(s)); err == nil {
			return parsed
		}
	}
	return v
}

func toolCallResponsePart(id, response ojson.Value) ojson.Value {
	ms := []ojson.Member{member("type", ojson.String(partToolCallResponse))}
	if id.Kind() == ojson.KindString {
		ms = append(ms, member("id", id))
	}
	return ojson.Object(append(ms, member("response", response))...)
}

// mediaPart builds a blob part for a data URL ("data:<mime>;base64,<data>"), else a uri part.
func mediaPart(modality, url string) ojson.Value {
	if mime, data, ok := parseDataURL(url); ok {
		return blobPart(modality, mime, data)
	}
	return uriPart(modality, url)
}

func uriPart(modality, url string) ojson.Value {
	return ojson.Object(member("type", ojson.String(partURI)), member("modality", ojson.String(modality)), member("uri", ojson.String(url)))
}

func blobPart(modality, mime, base64 string) ojson.Value {
	ms := []ojson.Member{member("type", ojson.String(partBlob)), member("modality", ojson.String(modality))}
	if mime != "" {
		ms = append(ms, member("mime_type", ojson.String(mime)))
	}
	return ojson.Object(append(ms, member("content", ojson.String(base64)))...)
}

// audioPart maps an input_audio object ({"data", "format"}) to a blob part.
func audioPart(a ojson.Value) (ojson.Value, bool) {
	data, ok := get(a, "data").AsString()
	if !ok {
		return ojson.Value{}, false
	}
	mime := ""
	if f, ok := get(a, "format").AsString(); ok && f != "" {
		mime = "audio/" + f
	}
	return blobPart("audio", mime, data), true
}

// documentPart maps a file reference: a string file_id to a file part, else file_data (a data URL
// or a URL) to a media part.
func documentPart(f ojson.Value) (ojson.Value, bool) {
	if id := get(f, "file_id"); id.Kind() == ojson.KindString {
		return filePart("document", id), true
	}
	if data, ok := get(f, "file_data").AsString(); ok {
		return mediaPart("document", data), true
	}
	return ojson.Value{}, false
}

func filePart(modality string, fileID ojson.Value) ojson.Value {
	return ojson.Object(member("type", ojson.String(partFile)), member("modality", ojson.String(modality)), member("file_id", fileID))
}

// parseDataURL splits a base64 data URL into its media type and data.
func parseDataURL(u string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mime, found = strings.CutSuffix(meta, ";base64")
	if !found {
		return "", "", false
	}
	return mime, data, true
}

// message builds {"role", "parts"} plus "name" when it is a string.
func message(role string, parts []ojson.Value, name ojson.Value) ojson.Value {
	if parts == nil {
		parts = []ojson.Value{}
	}
	ms := []ojson.Member{member("role", ojson.String(role)), member("parts", ojson.Array(parts...))}
	if name.Kind() == ojson.KindString {
		ms = append(ms, member("name", name))
	}
	return ojson.Object(ms...)
}

// outputMessage builds {"role", "parts", "finish_reason"}, "error" when finishReason is "".
func outputMessage(role string, parts []ojson.Value, finishReason string) ojson.Value {
	ms := message(role, parts, ojson.Null()).Members()
	finish := member("finish_reason", ojson.String(cmp.Or(finishReason, finishReasonError)))
	return ojson.Object(append(ms, finish)...)
}

// stringOr returns v's string, or def.
func stringOr(v ojson.Value, def string) string {
	if s, ok := v.AsString(); ok && s != "" {
		return s
	}
	return def
}

// ---- Chat Completions ----

func chatInputMessages(req ojson.Value) []ojson.Value {
	msgs := get(req, "messages")
	if msgs.Kind() != ojson.KindArray {
		return nil
	}
	out := []ojson.Value{}
	for _, m := range msgs.Elems() {
		if m.Kind() != ojson.KindObject {
			continue
		}
		role := stringOr(get(m, "role"), roleUser)
		if role == roleTool {
			out = append(out, message(role, []ojson.Value{toolCallResponsePart(get(m, "tool_call_id"), get(m, "content"))}, get(m, "name")))
			continue
		}
		out = append(out, message(role, chatMessageParts(m), get(m, "name")))
	}
	return out
}

// chatMessageParts maps a Chat message: reasoning, content, tool calls (and legacy function_call).
func chatMessageParts(m ojson.Value) []ojson.Value {
	var parts []ojson.Value
	if s := stringOr(or(get(m, "reasoning_content"), get(m, "reasoning")), ""); s != "" {
		parts = append(parts, reasoningPart(s))
	}
	parts = append(parts, chatContentParts(get(m, "content"))...)
	if s := stringOr(get(m, "refusal"), ""); s != "" {
		parts = append(parts, ojson.Object(member("type", ojson.String("refusal")), member("content", ojson.String(s))))
	}
	for _, tc := range get(m, "tool_calls").Elems() {
		if tc.Kind() != ojson.KindObject {
			continue
		}
		fn := get(tc, "function")
		parts = append(parts, toolCallPart(get(tc, "id"), get(fn, "name"), get(fn, "arguments")))
	}
	if fc := get(m, "function_call"); fc.Kind() == ojson.KindObject {
		parts = append(parts, toolCallPart(ojson.Null(), get(fc, "name"), get(fc, "arguments")))
	}
	return parts
}

// contentParts maps message content: a string is one text part; each object of an array is mapped
// by part, or passed through as it is when part does not know it (other elements are skipped).
func contentParts(content ojson.Value, part func(typ string, p ojson.Value) (ojson.Value, bool)) []ojson.Value {
	if s, ok := content.AsString(); ok {
		return []ojson.Value{textPart(s)}
	}
	var parts []ojson.Value
	for _, p := range content.Elems() {
		if p.Kind() != ojson.KindObject {
			continue
		}
		typ, _ := get(p, "type").AsString()
		if mapped, ok := part(typ, p); ok {
			p = mapped
		}
		parts = append(parts, p)
	}
	return parts
}

// chatContentParts maps Chat content: a string (none when empty), or an array of content parts.
func chatContentParts(content ojson.Value) []ojson.Value {
	if s, ok := content.AsString(); ok && s == "" {
		return nil
	}
	return contentParts(content, chatPart)
}

func chatPart(typ string, p ojson.Value) (ojson.Value, bool) {
	switch typ {
	case "text":
		if s, ok := get(p, "text").AsString(); ok {
			return textPart(s), true
		}
	case "image_url":
		img := get(p, "image_url")
		url, ok := img.AsString()
		if !ok {
			url, ok = get(img, "url").AsString()
		}
		if ok {
			return mediaPart("image", url), true
		}
	case "input_audio":
		return audioPart(get(p, "input_audio"))
	case "file":
		return documentPart(get(p, "file"))
	}
	return ojson.Value{}, false
}

func chatOutputMessages(resp ojson.Value) []ojson.Value {
	choices := get(resp, "choices")
	if choices.Kind() != ojson.KindArray {
		return nil
	}
	out := []ojson.Value{}
	for _, c := range choices.Elems() {
		if c.Kind() != ojson.KindObject {
			continue
		}
		m := get(c, "message")
		out = append(out, outputMessage(stringOr(get(m, "role"), roleAssistant), chatMessageParts(m), stringOr(get(c, "finish_reason"), "")))
	}
	return out
}

// ---- Responses ----

func responsesInputMessages(req ojson.Value) (system, input []ojson.Value) {
	if s, ok := get(req, "instructions").AsString(); ok && s != "" {
		system = []ojson.Value{textPart(s)}
	}
	in, ok := req.Get("input")
	if !ok {
		return system, nil
	}
	if s, ok := in.AsString(); ok {
		return system, []ojson.Value{message(roleUser, []ojson.Value{textPart(s)}, ojson.Null())}
	}
	if in.Kind() != ojson.KindArray {
		return system, nil
	}
	return system, responsesItemMessages(in.Elems(), false)
}

// responsesItemMessages maps Responses items to messages in order. Consecutive items of the
// assistant (messages, function calls, reasoning, other model items) join one assistant message,
// consecutive tool outputs one "tool" message; user, system and developer messages stay apart. With
// single, every item goes into one assistant message (a response's output).
func responsesItemMessages(items []ojson.Value, single bool) []ojson.Value {
	type msg struct {
		role  string
		parts []ojson.Value
	}
	var msgs []msg
	add := func(role string, parts ...ojson.Value) {
		if single {
			role = roleAssistant
		}
		if n := len(msgs); n > 0 && msgs[n-1].role == role && (role == roleAssistant || role == roleTool) {
			msgs[n-1].parts = append(msgs[n-1].parts, parts...)
			return
		}
		msgs = append(msgs, msg{role: role, parts: parts})
	}
	for _, it := range items {
		if it.Kind() != ojson.KindObject {
			continue
		}
		typ, _ := get(it, "type").AsString()
		if typ == "" && get(it, "role").Kind() == ojson.KindString {
			typ = "message"
		}
		switch {
		case typ == "message":
			role := stringOr(get(it, "role"), roleUser)
			parts := responsesContentParts(get(it, "content"))
			if role == roleAssistant || single {
				add(role, parts...)
			} else {
				msgs = append(msgs, msg{role: role, parts: parts})
			}
		case typ == "function_call":
			add(roleAssistant, toolCallPart(or(get(it, "call_id"), get(it, "id")), get(it, "name"), get(it, "arguments")))
		case typ == "custom_tool_call":
			add(roleAssistant, toolCallPart(or(get(it, "call_id"), get(it, "id")), get(it, "name"), get(it, "input")))
		case typ == "reasoning":
			if s := responsesReasoningText(it); s != "" {
				add(roleAssistant, reasoningPart(s))
			}
		case strings.HasSuffix(typ, "_output"):
			add(roleTool, toolCallResponsePart(get(it, "call_id"), get(it, "output")))
		default:
			add(roleAssistant, it)
		}
	}
	out := make([]ojson.Value, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, message(m.role, m.parts, ojson.Null()))
	}
	return out
}

// responsesReasoningText joins a reasoning item's summary texts, else its content texts, with "\n".
func responsesReasoningText(it ojson.Value) string {
	var texts []string
	for _, field := range []string{"summary", "content"} {
		for _, s := range get(it, field).Elems() {
			if t, ok := get(s, "text").AsString(); ok && t != "" {
				texts = append(texts, t)
			}
		}
		if len(texts) > 0 {
			break
		}
	}
	return strings.Join(texts, "\n")
}

// responsesContentParts maps Responses message content: a string, or an array of content parts.
func responsesContentParts(content ojson.Value) []ojson.Value {
	return contentParts(content, responsesPart)
}

func responsesPart(typ string, p ojson.Value) (ojson.Value, bool) {
	switch typ {
	case "input_text", "output_text", "text":
		if s, ok := get(p, "text").AsString(); ok {
			return textPart(s), true
		}
	case "input_image":
		if url, ok := get(p, "image_url").AsString(); ok {
			return mediaPart("image", url), true
		}
		if id := get(p, "file_id"); id.Kind() == ojson.KindString {
			return filePart("image", id), true
		}
	case "input_file":
		if part, ok := documentPart(p); ok {
			return part, true
		}
		if url, ok := get(p, "file_url").AsString(); ok {
			return mediaPart("document", url), true
		}
	case "input_audio":
		return audioPart(get(p, "input_audio"))
	}
	return ojson.Value{}, false
}

func responsesOutputMessages(resp ojson.Value) []ojson.Value {
	output := get(resp, "output")
	if output.Kind() != ojson.KindArray {
		return nil
	}
	msgs := responsesItemMessages(output.Elems(), true)
	var parts []ojson.Value
	if len(msgs) == 1 {
		parts = get(msgs[0], "parts").Elems()
	}
	return []ojson.Value{outputMessage(roleAssistant, parts, responsesFinishReason(resp, output.Elems()))}
}

// responsesFinishReason is incomplete_details.reason, else for a completed response "tool_call"
// when its output holds a function call and "stop" otherwise, else "" (→ "error").
func responsesFinishReason(resp ojson.Value, output []ojson.Value) string {
	if s := stringOr(get(get(resp, "incomplete_details"), "reason"), ""); s != "" {
		return s
	}
	if status, _ := get(resp, "status").AsString(); status != "completed" {
		return ""
	}
	if hasTyped(output, "function_call") || hasTyped(output, "custom_tool_call") {
		return "tool_call"
	}
	return "stop"
}

// ---- Anthropic Messages ----

func anthropicInputMessages(req ojson.Value) (system, input []ojson.Value) {
	if sys, ok := req.Get("system"); ok {
		switch sys.Kind() {
		case ojson.KindString:
			if s, _ := sys.AsString(); s != "" {
				system = []ojson.Value{textPart(s)}
			}
		case ojson.KindArray:
			system = anthropicContentParts(sys)
			if system == nil {
				system = []ojson.Value{}
			}
		}
	}
	msgs := get(req, "messages")
	if msgs.Kind() != ojson.KindArray {
		return system, nil
	}
	input = []ojson.Value{}
	for _, m := range msgs.Elems() {
		if m.Kind() != ojson.KindObject {
			continue
		}
		input = append(input, message(stringOr(get(m, "role"), roleUser), anthropicContentParts(get(m, "content")), ojson.Null()))
	}
	return system, input
}

// anthropicContentParts maps Anthropic content: a string, or an array of content blocks.
func anthropicContentParts(content ojson.Value) []ojson.Value {
	return contentParts(content, anthropicPart)
}

func anthropicPart(typ string, b ojson.Value) (ojson.Value, bool) {
	switch typ {
	case "text":
		if s, ok := get(b, "text").AsString(); ok {
			return textPart(s), true
		}
	case "thinking":
		if s, ok := get(b, "thinking").AsString(); ok {
			return reasoningPart(s), true
		}
	case "tool_use":
		return toolCallPart(get(b, "id"), get(b, "name"), get(b, "input")), true
	case "tool_result":
		return toolCallResponsePart(get(b, "tool_use_id"), get(b, "content")), true
	case "image", "document": // the block type is the part's modality
		return anthropicSourcePart(typ, get(b, "source"))
	}
	return ojson.Value{}, false
}

// anthropicSourcePart maps an image or document source: base64 → blob, url → uri, file → file.
func anthropicSourcePart(modality string, src ojson.Value) (ojson.Value, bool) {
	kind, _ := get(src, "type").AsString()
	switch kind {
	case "base64":
		if data, ok := get(src, "data").AsString(); ok {
			mime, _ := get(src, "media_type").AsString()
			return blobPart(modality, mime, data), true
		}
	case "url":
		if url, ok := get(src, "url").AsString(); ok {
			return uriPart(modality, url), true
		}
	case "file":
		if id := get(src, "file_id"); id.Kind() == ojson.KindString {
			return filePart(modality, id), true
		}
	}
	return ojson.Value{}, false
}

func anthropicOutputMessages(resp ojson.Value) []ojson.Value {
	content := get(resp, "content")
	if content.Kind() != ojson.KindArray {
		return nil
	}
	return []ojson.Value{outputMessage(stringOr(get(resp, "role"), roleAssistant), anthropicContentParts(content), stringOr(get(resp, "stop_reason"), ""))}
}
