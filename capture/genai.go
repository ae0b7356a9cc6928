package capture

import (
	"bytes"
	"math"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// requestParams holds the raw JSON text of the request members the gen_ai.request.* attributes
// come from (nil when absent; the last of duplicate members wins, as json.loads does).
type requestParams struct {
	model, stream                                 []byte
	temperature, topP, topK                       []byte
	maxTokens, maxOutputTokens, maxCompletionToks []byte
	seed, frequencyPenalty, presencePenalty, n    []byte
	stop, stopSequences                           []byte
	previousResponseID                            []byte
	reasoning, reasoningEffort, outputConfig      []byte
}

// appendRequestAttributes adds the gen_ai.request.* attributes of a request object (SPEC §0
// "Spans"), each only when the request carries it with a usable JSON type — a missing or mistyped
// parameter stays absent, never a default:
//
//   - gen_ai.request.model (string model) and gen_ai.request.stream (boolean stream);
//   - gen_ai.request.temperature, top_p, frequency_penalty, presence_penalty (numbers, as doubles)
//     and top_k (a double under v1.41.0, an int under the latest experimental conventions when
//     integral, see [semconv.GenAIConventions.RequestTopK]);
//   - gen_ai.request.max_tokens: the first integer of max_completion_tokens (Chat),
//     max_output_tokens (Responses), max_tokens (Anthropic, legacy Chat);
//   - gen_ai.request.seed (integer seed); gen_ai.request.choice.count (integer n, only when not 1);
//   - gen_ai.request.stop_sequences: the strings of stop_sequences (Anthropic) or stop (Chat: a
//     string or an array), absent when there are none;
//   - gen_ai.request.previous_response.id: a non-empty string previous_response_id (Responses);
//   - gen_ai.request.reasoning.level: the non-empty string of reasoning.effort (Responses), else
//     reasoning_effort (Chat), else output_config.effort (Anthropic), as sent.
//
// p holds the raw texts of the request's top-level members, read by the pass that validated the
// request ([requestParams.Visit]); only the small ones are parsed here.
func appendRequestAttributes(attrs []attribute.KeyValue, p *requestParams, conv semconv.GenAIConventions) []attribute.KeyValue {
	if s, ok := rawString(p.model); ok {
		attrs = append(attrs, semconv.GenAIRequestModel(s))
	}
	switch string(p.stream) {
	case "true":
		attrs = append(attrs, semconv.GenAIRequestStream(true))
	case "false":
		attrs = append(attrs, semconv.GenAIRequestStream(false))
	}
	if f, ok := rawFloat(p.temperature); ok {
		attrs = append(attrs, semconv.GenAIRequestTemperature(f))
	}
	if f, ok := rawFloat(p.topP); ok {
		attrs = append(attrs, semconv.GenAIRequestTopP(f))
	}
	if f, ok := rawFloat(p.topK); ok {
		attrs = append(attrs, conv.RequestTopK(f))
	}
	for _, raw := range [][]byte{p.maxCompletionToks, p.maxOutputTokens, p.maxTokens} {
		if n, ok := rawInt(raw); ok {
			attrs = append(attrs, semconv.GenAIRequestMaxTokens(n))
			break
		}
	}
	if n, ok := rawInt(p.seed); ok {
		attrs = append(attrs, semconv.GenAIRequestSeed(n))
	}
	if f, ok := rawFloat(p.frequencyPenalty); ok {
		attrs = append(attrs, semconv.GenAIRequestFrequencyPenalty(f))
	}
	if f, ok := rawFloat(p.presencePenalty); ok {
		attrs = append(attrs, semconv.GenAIRequestPresencePenalty(f))
	}
	if n, ok := rawInt(p.n); ok && n != 1 {
		attrs = append(attrs, semconv.GenAIRequestChoiceCount(n))
	}
	stop := rawStrings(p.stopSequences)
	if stop == nil {
		stop = rawStrings(p.stop)
	}
	if len(stop) > 0 {
		attrs = append(attrs, semconv.GenAIRequestStopSequences(stop...))
	}
	if s, ok := rawString(p.previousResponseID); ok && s != "" {
		attrs = append(attrs, semconv.GenAIRequestPreviousResponseID(s))
	}
	if level := reasoningLevel(p); level != "" {
		attrs = append(attrs, semconv.GenAIRequestReasoningLevel(level))
	}
	return attrs
}

// requestParamFields are the request members appendRequestAttributes reads, by name.
var requestParamFields = map[string]func(*requestParams) *[]byte{
	"model":                 func(p *requestParams) *[]byte { return &p.model },
	"stream":                func(p *requestParams) *[]byte { return &p.stream },
	"temperature":           func(p *requestParams) *[]byte { return &p.temperature },
	"top_p":                 func(p *requestParams) *[]byte { return &p.topP },
	"top_k":                 func(p *requestParams) *[]byte { return &p.topK },
	"max_tokens":            func(p *requestParams) *[]byte { return &p.maxTokens },
	"max_output_tokens":     func(p *requestParams) *[]byte { return &p.maxOutputTokens },
	"max_completion_tokens": func(p *requestParams) *[]byte { return &p.maxCompletionToks },
	"seed":                  func(p *requestParams) *[]byte { return &p.seed },
	"frequency_penalty":     func(p *requestParams) *[]byte { return &p.frequencyPenalty },
	"presence_penalty":      func(p *requestParams) *[]byte { return &p.presencePenalty },
	"n":                     func(p *requestParams) *[]byte { return &p.n },
	"stop":                  func(p *requestParams) *[]byte { return &p.stop },
	"stop_sequences":        func(p *requestParams) *[]byte { return &p.stopSequences },
	"previous_response_id":  func(p *requestParams) *[]byte { return &p.previousResponseID },
	"reasoning":             func(p *requestParams) *[]byte { return &p.reasoning },
	"reasoning_effort":      func(p *requestParams) *[]byte { return &p.reasoningEffort },
	"output_config":         func(p *requestParams) *[]byte { return &p.outputConfig },
}

// Visit is the [ojson.Visitor] of a request object's walk (depth 1): it keeps the raw text of each
// member appendRequestAttributes reads, the last of duplicates (as json.loads does).
func (p *requestParams) Visit(_ int, key, val []byte) {
	if val == nil {
		return
	}
	if name, ok := keyName(key); ok {
		if field := requestParamFields[string(name)]; field != nil {
			*field(p) = val
		}
	}
}

// reasoningLevel returns the first non-empty effort string of reasoning.effort, reasoning_effort,
// output_config.effort.
func reasoningLevel(p *requestParams) string {
	if v, ok := rawValue(p.reasoning); ok {
		if s, ok := get(v, "effort").AsString(); ok && s != "" {
			return s
		}
	}
	if s, ok := rawString(p.reasoningEffort); ok && s != "" {
		return s
	}
	if v, ok := rawValue(p.outputConfig); ok {
		if s, ok := get(v, "effort").AsString(); ok && s != "" {
			return s
		}
	}
	return ""
}

// keyName returns the decoded name of a raw JSON string key (quotes included). Keys without
// escapes are returned as a subslice, without allocating.
func keyName(key []byte) ([]byte, bool) {
	if len(key) < 2 {
		return nil, false
	}
	if bytes.IndexByte(key, '\\') < 0 {
		return key[1 : len(key)-1], true
	}
	v, err := ojson.Parse(key)
	if err != nil {
		return nil, false
	}
	s, ok := v.AsString()
	return []byte(s), ok
}

// rawValue parses a member's raw value text (nil when absent).
func rawValue(raw []byte) (ojson.Value, bool) {
	if len(raw) == 0 {
		return ojson.Value{}, false
	}
	v, err := ojson.Parse(raw)
	return v, err == nil
}

func rawString(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	v, ok := rawValue(raw)
	if !ok {
		return "", false
	}
	return v.AsString()
}

// rawFloat returns a finite JSON number as a float64.
func rawFloat(raw []byte) (float64, bool) {
	v, ok := rawValue(raw)
	if !ok {
		return 0, false
	}
	f, ok := v.Float64()
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// rawInt returns a JSON integer (no fraction, no exponent) that fits int64.
func rawInt(raw []byte) (int64, bool) {
	v, ok := rawValue(raw)
	if !ok {
		return 0, false
	}
	return v.Int64()
}

// rawStrings returns a JSON string as a one-element list, or the string elements of a JSON array
// (other elements skipped); nil otherwise.
func rawStrings(raw []byte) []string {
	v, ok := rawValue(raw)
	if !ok {
		return nil
	}
	if s, ok := v.AsString(); ok {
		return []string{s}
	}
	var out []string
	for _, e := range v.Elems() {
		if s, ok := e.AsString(); ok {
			out = append(out, s)
		}
	}
	return out
}

// compactionType is the item / content block type of compacted conversation state: a Responses
// input or output item, an Anthropic content block.
const compactionType = "compaction"

// requestCompacted reports whether a request object sends compacted conversation state to the
// model: a Responses input item, or a content block of an Anthropic message, of type "compaction".
// hint is the validating pass's finding that some string of the request ends in "compaction"
// (quotes included); only then is the request parsed (unless parsed is given).
func requestCompacted(req []byte, hint bool, parsed *ojson.Value) bool {
	if !hint {
		return false
	}
	v := parsed
	if v == nil {
		p, err := ojson.Parse(req)
		if err != nil {
			return false
		}
		v = &p
	}
	if hasTyped(get(*v, "input").Elems(), compactionType) {
		return true
	}
	for _, m := range get(*v, "messages").Elems() {
		if hasTyped(get(m, "content").Elems(), compactionType) {
			return true
		}
	}
	return false
}

// hasTyped reports whether one of the objects has "type" equal to typ.
func hasTyped(items []ojson.Value, typ string) bool {
	for _, it := range items {
		if s, ok := get(it, "type").AsString(); ok && s == typ {
			return true
		}
	}
	return false
}
