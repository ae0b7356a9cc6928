package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// dialectEngine is the wire of the vLLM and SGLang engines' answers (Chat Completions and
// tokenize, FastAPI's): no provider request-id or processing-time headers, no Cache-Control on
// streams. It never reaches a [Call].
const dialectEngine Dialect = "engine"

// engineCall reports whether the Server answers a call of dialect d as a vLLM or SGLang engine:
// Chat Completions of both, Responses of vLLM (vllmresponses.go).
func (s *Server) engineCall(d Dialect) bool {
	return d == DialectChat && s.cfg.engine != EngineOpenAI || d == DialectResponses && s.cfg.engine == EngineVLLM
}

// engineErrorType is the "type" vLLM and SGLang give an error of status.
func engineErrorType(status int) string {
	switch {
	case status == http.StatusNotFound:
		return "NotFoundError"
	case status >= 500:
		return "InternalServerError"
	}
	return "BadRequestError"
}

// writeEngineError answers e in the engine's error shape: vLLM {"error": {message, type, param,
// code}}, SGLang {object: "error", message, type, param, code}.
func writeEngineError(w http.ResponseWriter, engine Engine, g ids, e *apiError) {
	body := obj{{"object", "error"}, {"message", e.message}, {"type", engineErrorType(e.status)},
		{"param", nullable(e.param)}, {"code", e.status}}
	if engine == EngineVLLM {
		body = obj{{"error", obj{{"message", e.message}, {"type", engineErrorType(e.status)},
			{"param", nullable(e.param)}, {"code", e.status}}}}
	}
	writeErrorBody(w, dialectEngine, g, e.status, body)
}

// engineAPI returns the engine's JSON answer and event stream builders for dialect d.
func engineAPI(engine Engine, d Dialect) (func(*request, *engineAnswer, ids) obj, func(*encoder, *request, *engineAnswer, ids) []event) {
	switch {
	case d == DialectResponses:
		return vllmResponses, vllmResponsesEvents
	case engine == EngineSGLang:
		return sglangChat, sglangEvents
	}
	return vllmChat, vllmEvents
}

// tokenizePath reports whether path is the engine's tokenize endpoint: vLLM serves POST
// /tokenize, SGLang POST /tokenize and /v1/tokenize.
func (s *Server) tokenizePath(path string) bool {
	switch s.cfg.engine {
	case EngineVLLM:
		return path == "/tokenize"
	case EngineSGLang:
		return path == "/tokenize" || path == "/v1/tokenize"
	}
	return false
}

// serveTokenize answers the tokenize endpoint. A chat request {model, messages, tools,
// add_generation_prompt (default true), add_special_tokens (vLLM default false, SGLang true)}
// gets the tokens of the prompt a chat call with the same members would have; a completion
// request {model, prompt, add_special_tokens (default true)} the tokens of the text (BOS first
// when add_special_tokens). vLLM answers {count, max_model_len, tokens, token_strs} (token_strs
// null unless "return_token_strs"), SGLang {tokens, count, max_model_len}.
func (s *Server) serveTokenize(w http.ResponseWriter, body []byte) {
	g := newIDs(body)
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil || fields == nil {
		writeEngineError(w, s.cfg.engine, g, &apiError{status: 400, message: "The request body is not a valid JSON object."})
		return
	}
	r := &request{dialect: DialectChat, engine: s.cfg.engine, body: body, fields: fields}
	tr, apiErr := readTokenRequest(r)
	if apiErr != nil {
		writeEngineError(w, s.cfg.engine, g, apiErr)
		return
	}
	var returnStrs bool
	_ = json.Unmarshal(fields["return_token_strs"], &returnStrs)
	var toks []token
	switch msgs, prompt := fields["messages"], fields["prompt"]; {
	case present(msgs) == present(prompt):
		writeEngineError(w, s.cfg.engine, g, &apiError{status: 400, message: "Exactly one of 'prompt' or 'messages' must be provided."})
		return
	case present(msgs):
		turns, err := readTurns(msgs)
		if err != nil {
			writeEngineError(w, s.cfg.engine, g, err)
			return
		}
		bos := tr.addSpecialTokens
		if !present(fields["add_special_tokens"]) {
			bos = s.cfg.engine == EngineSGLang
		}
		toks = renderPrompt(turns, fields["tools"], bos, tr.generationPrompt)
	default:
		var text string
		if json.Unmarshal(prompt, &text) != nil {
			writeEngineError(w, s.cfg.engine, g, &apiError{status: 400, message: "prompt: Input should be a valid string", param: "prompt"})
			return
		}
		if !present(fields["add_special_tokens"]) || tr.addSpecialTokens {
			toks = append(toks, special(tokEndOfText))
		}
		toks = append(toks, tokenize(text)...)
	}
	ids := intsOrNil(true, toks)
	out := obj{{"tokens", ids}, {"count", len(toks)}, {"max_model_len", s.cfg.modelLen()}}
	if s.cfg.engine == EngineVLLM {
		var strs any
		if returnStrs {
			list := arr{}
			for _, t := range toks {
				list = append(list, t.text)
			}
			strs = list
		}
		out = obj{{"count", len(toks)}, {"max_model_len", s.cfg.modelLen()}, {"tokens", ids}, {"token_strs", strs}}
	}
	b, err := marshal(out)
	if err != nil {
		writeEngineError(w, s.cfg.engine, g, &apiError{status: 500, message: fmt.Sprintf("fakemodel: %v", err)})
		return
	}
	writeBody(w, dialectEngine, g, http.StatusOK, "application/json", b)
}
