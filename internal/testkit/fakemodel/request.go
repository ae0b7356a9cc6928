package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// request is what the answer depends on, read from a validated request body of any dialect.
type request struct {
	dialect Dialect
	engine  Engine                     // who answers (EngineOpenAI unless configured)
	body    []byte                     // as received
	fields  map[string]json.RawMessage // the top-level members

	model  string
	stream bool

	lastUser   string      // text of the last user message ("" when none)
	toolResult *toolResult // the last input is a tool result
	tool       *tool       // the function tool to call, nil when none is offered or allowed
	reasoning  bool        // the answer carries reasoning

	promptTokens int  // deterministic prompt size, see doc.go
	items        int  // messages / input items
	followUp     bool // previous_response_id is set (Responses)
	cacheControl bool // some member is named "cache_control" (Anthropic prompt caching)
	maxOutput    int  // output token limit, 0 = none
	includeUsage bool // Chat stream_options.include_usage
}

// toolResult is the tool output the request ends with.
type toolResult struct {
	name string // the called tool's name, "" when the call is not in the request
	text string
}

// tool is a function tool offered by the request.
type tool struct {
	name   string
	params json.RawMessage // JSON schema of the arguments, may be empty
}

// apiError is a validation failure, answered with the dialect's error shape and status 400.
type apiError struct {
	status  int
	message string
	param   string // OpenAI "param", "" = null
	code    string // OpenAI "code", "" = null
}

// jsonKind names the JSON type of raw as the OpenAI API's messages do.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(raw, ".eE") {
		return "a decimal"
	}
	return "an integer"
}

// present reports whether the member exists and is not null.
func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// parseRequest validates body for dialect d as the provider does and extracts what the answer
// depends on.
func parseRequest(d Dialect, e Engine, body []byte) (*request, *apiError) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, notJSON(d)
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, notJSON(d)
	}
	r := &request{dialect: d, engine: e, body: body, fields: fields}
	if err := r.readCommon(); err != nil {
		return nil, err
	}
	var err *apiError
	switch d {
	case DialectResponses:
		err = r.readResponses()
	case DialectChat:
		err = r.readChat()
	default:
		err = r.readMessages()
	}
	if err != nil {
		return nil, err
	}
	chars := 0
	for k, v := range tree.(map[string]any) {
		if k != "model" && !r.transportMember(k) {
			chars += r.walk(v)
		}
	}
	r.promptTokens = 8 + (chars+3)/4
	r.reasoning = r.reasoning || (d != DialectMessages && reasoningModel(r.model))
	return r, nil
}

// tokenTransportMembers are the engine request members that only say which token facts the answer
// reports (log probs, ids, their text), not what is sampled: a real engine samples the same tokens
// with the same log probabilities whether or not they are asked for.
var tokenTransportMembers = []string{"logprobs", "top_logprobs", "return_token_ids", "return_tokens_as_token_ids", "return_prompt_token_ids"}

// seed is what the answer's ids derive from: the request members except "stream",
// "stream_options" and an engine request's transport members (transportMember), in a canonical
// order, so a streamed and a non-streamed call of the same request get the same ids and the same
// answer, and a token-capturing proxy that adds those members gets the answer to the client's own
// request, with more members.
func (r *request) seed() []byte {
	m := make(map[string]json.RawMessage, len(r.fields))
	for k, v := range r.fields {
		if k == "stream" || k == "stream_options" || r.transportMember(k) {
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m) // sorted keys; the values were validated by json.Unmarshal
	if err != nil {
		return r.body
	}
	return append([]byte(r.dialect+"\n"), b...)
}

// transportMember reports a member of an engine request that only says which token facts the
// answer reports (tokenTransportMembers, responsesTransportMembers).
func (r *request) transportMember(k string) bool {
	return r.engineChat() && slices.Contains(tokenTransportMembers, k) ||
		r.engineResponses() && slices.Contains(responsesTransportMembers, k)
}

// engineChat reports a Chat Completions request answered by the vLLM or SGLang engine.
func (r *request) engineChat() bool { return r.dialect == DialectChat && r.engine != EngineOpenAI }

// walk counts the characters of every string value under v and notes cache_control members.
func (r *request) walk(v any) int {
	switch v := v.(type) {
	case string:
		return utf8.RuneCountInString(v)
	case []any:
		n := 0
		for _, e := range v {
			n += r.walk(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			if k == "cache_control" {
				r.cacheControl = true
			}
			n += r.walk(e)
		}
		return n
	}
	return 0
}

// notJSON is the error for a body that is not a JSON object.
func notJSON(d Dialect) *apiError {
	if d == DialectMessages {
		return &apiError{status: 400, message: "There was an error parsing the body of your request. Please make sure the body is a valid JSON object."}
	}
	return &apiError{status: 400, message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"}
}

// readCommon reads and validates "model" and "stream".
func (r *request) readCommon() *apiError {
	m := r.fields["model"]
	switch {
	case !present(m) && r.dialect == DialectChat:
		return &apiError{status: 400, message: "you must provide a model parameter"}
	case !present(m):
		return r.missing("model")
	case json.Unmarshal(m, &r.model) != nil:
		return r.wrongType("model", "a string", m)
	case r.model == "" && r.dialect == DialectMessages:
		return &apiError{status: 400, message: "model: String should have at least 1 character"}
	case r.model == "":
		return &apiError{status: 400, message: "you must provide a model parameter"}
	case present(r.fields["stream"]) && json.Unmarshal(r.fields["stream"], &r.stream) != nil:
		return r.wrongType("stream", "a boolean", r.fields["stream"])
	}
	return nil
}

// missing is the provider's error for a required member that is absent or null.
func (r *request) missing(param string) *apiError {
	if r.dialect == DialectMessages {
		return &apiError{status: 400, message: param + ": Field required"}
	}
	return &apiError{status: 400, message: fmt.Sprintf("Missing required parameter: '%s'.", param),
		param: param, code: "missing_required_parameter"}
}

// anthropicTypes names OpenAI's expected types as Anthropic's messages do.
var anthropicTypes = map[string]string{
	"a string": "a valid string", "a boolean": "a valid boolean", "an integer": "a valid integer",
	"an array": "a valid list", "an object": "a valid dictionary or object",
}

// wrongType is the provider's error for a member of the wrong JSON type; want is OpenAI's name of
// the expected type ("a string", "an array", ...).
func (r *request) wrongType(param, want string, got json.RawMessage) *apiError {
	if r.dialect == DialectMessages {
		return &apiError{status: 400, message: fmt.Sprintf("%s: Input should be %s", param, anthropicTypes[want])}
	}
	return &apiError{
		status:  400,
		message: fmt.Sprintf("Invalid type for '%s': expected %s, but got %s instead.", param, want, jsonKind(got)),
		param:   param,
		code:    "invalid_type",
	}
}

// reasoningModel reports whether model names an OpenAI reasoning model family.
func reasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return slices.ContainsFunc([]string{"o1", "o3", "o4", "gpt-5"}, func(p string) bool { return m == p || strings.HasPrefix(m, p+"-") })
}

// intField reads an optional integer member; ok is false when it is present but not an integer.
func intField(raw json.RawMessage) (n int, ok bool) {
	if !present(raw) {
		return 0, true
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, false
	}
	return n, true
}

// textOf returns the text of a content value: a string, or the concatenated "text" members of
// an array of parts (input_text, output_text, text blocks, ...).
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text    *string         `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		switch {
		case p.Text != nil:
			b.WriteString(*p.Text)
		case present(p.Content):
			b.WriteString(textOf(p.Content))
		}
	}
	return b.String()
}

// responsesInputItem is what the fake reads of one Responses input item: a message (role and
// content), a function_call or a function_call_output.
type responsesInputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// readResponses reads a Responses API request (POST /v1/responses).
func (r *request) readResponses() *apiError {
	if n, ok := intField(r.fields["max_output_tokens"]); !ok {
		return r.wrongType("max_output_tokens", "an integer", r.fields["max_output_tokens"])
	} else {
		r.maxOutput = n
	}
	var prev string
	_ = json.Unmarshal(r.fields["previous_response_id"], &prev)
	r.followUp = prev != ""
	if present(r.fields["reasoning"]) {
		var rs struct {
			Effort *string `json:"effort"`
		}
		if json.Unmarshal(r.fields["reasoning"], &rs) != nil {
			return r.wrongType("reasoning", "an object", r.fields["reasoning"])
		}
		r.reasoning = rs.Effort == nil || *rs.Effort != "none"
	}
	if in := r.fields["input"]; present(in) {
		var s string
		if json.Unmarshal(in, &s) == nil {
			r.lastUser, r.items = s, 1
		} else {
			var items []responsesInputItem
			if json.Unmarshal(in, &items) != nil {
				return r.wrongType("input", "a string or an array", in)
			}
			r.items = len(items)
			names := map[string]string{}
			for i, it := range items {
				switch {
				case it.Type == "function_call":
					names[it.CallID] = it.Name
				case it.Type == "function_call_output" && i == len(items)-1:
					r.toolResult = &toolResult{name: names[it.CallID], text: textOf(it.Output)}
				case it.Role == "user":
					r.lastUser = textOf(it.Content)
				}
			}
		}
	}
	return r.readTool()
}

// readChat reads a Chat Completions request (POST /v1/chat/completions).
func (r *request) readChat() *apiError {
	msgs := r.fields["messages"]
	if !present(msgs) {
		return r.missing("messages")
	}
	var messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	if json.Unmarshal(msgs, &messages) != nil {
		return r.wrongType("messages", "an array", msgs)
	}
	if len(messages) == 0 {
		return &apiError{status: 400, message: "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", param: "messages", code: "empty_array"}
	}
	r.items = len(messages)
	names := map[string]string{}
	for i, m := range messages {
		switch m.Role {
		case "assistant":
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Function.Name
			}
		case "tool":
			if i == len(messages)-1 {
				r.toolResult = &toolResult{name: names[m.ToolCallID], text: textOf(m.Content)}
			}
		case "user":
			r.lastUser = textOf(m.Content)
		}
	}
	for _, k := range []string{"max_completion_tokens", "max_tokens"} {
		n, ok := intField(r.fields[k])
		if !ok {
			return r.wrongType(k, "an integer", r.fields[k])
		}
		if n > 0 && r.maxOutput == 0 {
			r.maxOutput = n
		}
	}
	if n, ok := intField(r.fields["n"]); !ok {
		return r.wrongType("n", "an integer", r.fields["n"])
	} else if (n < 0 || n > 1) && r.engine == EngineOpenAI {
		return &apiError{status: 400, message: fmt.Sprintf("fakemodel: 'n' is %d: one choice per answer is served", n), param: "n"}
	}
	var so struct {
		IncludeUsage bool `json:"include_usage"`
	}
	_ = json.Unmarshal(r.fields["stream_options"], &so)
	r.includeUsage = so.IncludeUsage
	var effort string
	_ = json.Unmarshal(r.fields["reasoning_effort"], &effort)
	r.reasoning = effort != "" && effort != "none"
	return r.readTool()
}

// readMessages reads an Anthropic Messages request (POST /v1/messages).
func (r *request) readMessages() *apiError {
	mt := r.fields["max_tokens"]
	if !present(mt) {
		return r.missing("max_tokens")
	}
	n, ok := intField(mt)
	if !ok {
		return r.wrongType("max_tokens", "an integer", mt)
	}
	if n < 1 {
		return &apiError{status: 400, message: "max_tokens: Input should be greater than or equal to 1"}
	}
	r.maxOutput = n
	msgs := r.fields["messages"]
	if !present(msgs) {
		return r.missing("messages")
	}
	var messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(msgs, &messages) != nil {
		return r.wrongType("messages", "an array", msgs)
	}
	if len(messages) == 0 {
		return &apiError{status: 400, message: "messages: at least one message is required"}
	}
	r.items = len(messages)
	type block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	names := map[string]string{}
	for i, m := range messages {
		if m.Role != "user" && m.Role != "assistant" {
			return &apiError{status: 400, message: fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)}
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			if m.Role == "user" {
				r.lastUser = s
			}
			continue
		}
		var blocks []block
		if json.Unmarshal(m.Content, &blocks) != nil {
			return &apiError{status: 400, message: fmt.Sprintf("messages.%d.content: Input should be a valid list", i)}
		}
		var text strings.Builder
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				names[b.ID] = b.Name
			case "tool_result":
				if i == len(messages)-1 && m.Role == "user" {
					r.toolResult = &toolResult{name: names[b.ToolUseID], text: textOf(b.Content)}
				}
			case "text":
				text.WriteString(b.Text)
			}
		}
		if m.Role == "user" && text.Len() > 0 {
			r.lastUser = text.String()
		}
	}
	if present(r.fields["thinking"]) {
		var th struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(r.fields["thinking"], &th) != nil {
			return r.wrongType("thinking", "an object", r.fields["thinking"])
		}
		r.reasoning = th.Type == "enabled" || th.Type == "adaptive"
	}
	return r.readTool()
}

// readTool sets r.tool to the first function tool of "tools" unless tool_choice forbids tool
// calls (OpenAI "none", Anthropic {"type": "none"}).
func (r *request) readTool() *apiError {
	var choice string // OpenAI: a string
	var object struct {
		Type string `json:"type"`
	} // Anthropic: an object
	raw := r.fields["tool_choice"]
	none := json.Unmarshal(raw, &choice) == nil && choice == "none"
	if r.dialect == DialectMessages {
		none = json.Unmarshal(raw, &object) == nil && object.Type == "none"
	}
	if none {
		return nil
	}
	var tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Parameters  json.RawMessage `json:"parameters"`
		InputSchema json.RawMessage `json:"input_schema"`
		Function    struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if present(r.fields["tools"]) && json.Unmarshal(r.fields["tools"], &tools) != nil {
		return r.wrongType("tools", "an array", r.fields["tools"])
	}
	for _, t := range tools {
		name, params, ok := t.Name, t.Parameters, t.Type == "function"
		switch r.dialect {
		case DialectChat:
			name, params = t.Function.Name, t.Function.Parameters
		case DialectMessages:
			params, ok = t.InputSchema, t.Type == "" || t.Type == "custom"
		}
		if ok && name != "" {
			r.tool = &tool{name: name, params: params}
			break
		}
	}
	return nil
}
