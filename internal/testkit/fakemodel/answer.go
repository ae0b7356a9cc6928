package fakemodel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/ojson"
)

// answer is what the model "says", before it is shaped into a dialect.
type answer struct {
	reasons   bool      // the answer has a reasoning part (its text may be cut to "")
	reasoning string    // reasoning / summary / thinking text
	preamble  string    // Anthropic text block before a tool_use, "" = none
	text      string    // the visible answer, "" when the answer is a tool call
	call      *toolCall // the tool call, nil = none
	truncated bool      // the output limit cut the answer

	// usage, per choice
	inputTokens     int // OpenAI: all prompt tokens; Anthropic: uncached prompt tokens
	cachedTokens    int // OpenAI cached_tokens; Anthropic cache_read_input_tokens
	cacheWrite      int // Anthropic cache_creation_input_tokens
	outputTokens    int // including reasoning tokens
	reasoningTokens int
}

// toolCall is one function call with its JSON arguments text.
type toolCall struct {
	name      string
	arguments string
}

// tokensOf is the output token cost of s: ceil(bytes/4).
func tokensOf(s string) int { return (len(s) + 3) / 4 }

// snippet shortens s to at most n runes on one line.
func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// cutBytes shortens s to at most n bytes on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// plan computes the deterministic answer to r (see doc.go for the rules).
func plan(r *request) answer {
	var a answer
	user := snippet(r.lastUser, 120)
	switch {
	case r.toolResult != nil:
		tool := "The tool" // the call is not in the request (e.g. Responses previous_response_id)
		if r.toolResult.name != "" {
			tool = "The " + r.toolResult.name + " tool"
		}
		a.text = fmt.Sprintf("%s returned: %s", tool, snippet(r.toolResult.text, 200))
		a.reasoning = fmt.Sprintf("%s has answered; I will report its result to the user.", tool)
	case r.tool != nil:
		a.call = &toolCall{name: r.tool.name, arguments: arguments(r.tool.params, user)}
		a.reasoning = fmt.Sprintf("The user asked: %q. The %s tool can answer this, so I will call it.", user, r.tool.name)
		if r.dialect == DialectMessages {
			a.preamble = fmt.Sprintf("I'll use the %s tool.", r.tool.name)
		}
	case user == "":
		a.text = "Hello! This is a deterministic reply from gymtrace's fake model."
		a.reasoning = "There is no user message; I will greet the user."
	default:
		a.text = fmt.Sprintf("You said: %q. This is a deterministic reply from gymtrace's fake model.", user)
		a.reasoning = fmt.Sprintf("The user said %q. I will reply directly.", user)
	}
	a.reasons = r.reasoning
	if !a.reasons {
		a.reasoning = ""
	}

	prompt := r.promptTokens
	if r.items > 1 || r.followUp {
		a.cachedTokens = prompt / 2 / 8 * 8
	}
	a.inputTokens = prompt
	if r.dialect == DialectMessages {
		if r.cacheControl {
			a.cacheWrite = (prompt - a.cachedTokens) / 2
		}
		a.inputTokens = prompt - a.cachedTokens - a.cacheWrite
	}

	if a.reasons {
		a.reasoningTokens = 32 + tokensOf(a.reasoning)
	}
	visible := tokensOf(a.text) + tokensOf(a.preamble)
	if a.call != nil {
		visible += 6 + tokensOf(a.call.name) + tokensOf(a.call.arguments)
	}
	a.outputTokens = a.reasoningTokens + visible
	if r.maxOutput > 0 && a.outputTokens > r.maxOutput {
		a.truncated = true
		a.reasoningTokens = min(a.reasoningTokens, r.maxOutput)
		left := r.maxOutput - a.reasoningTokens
		full := a.text
		if a.call != nil {
			full = strings.TrimSpace(a.preamble + " I'll call the " + a.call.name + " tool.")
		}
		a.call, a.preamble, a.text = nil, "", cutBytes(full, left*4)
		if a.reasoningTokens < 32+tokensOf(a.reasoning) {
			a.reasoning = cutBytes(a.reasoning, max(a.reasoningTokens-32, 0)*4)
		}
		a.outputTokens = r.maxOutput
	}
	return a
}

// arguments builds JSON arguments for a call from the tool's parameter schema: the required
// properties (all properties when none is required), in schema order; the first string property
// gets text, other values follow their type (enum → its first value).
func arguments(schema json.RawMessage, text string) string {
	s, err := ojson.Parse(schema)
	props, _ := s.Get("properties")
	if err != nil || props.Kind() != ojson.KindObject {
		return "{}"
	}
	required := map[string]bool{}
	if req, _ := s.Get("required"); req.Kind() == ojson.KindArray {
		for _, n := range req.Elems() {
			if name, ok := n.AsString(); ok {
				required[name] = true
			}
		}
	}
	if text == "" {
		text = "example"
	}
	var out obj
	usedText := false
	for _, m := range props.CollapseDuplicates().Members() {
		if len(required) == 0 || required[m.Key] {
			out = out.with(m.Key, sampleValue(m.Value, text, &usedText))
		}
	}
	b, err := marshal(out)
	if err != nil || len(out) == 0 {
		return "{}"
	}
	return string(b)
}

// sampleValue is a value matching the property schema p.
func sampleValue(p ojson.Value, text string, usedText *bool) any {
	if enum, _ := p.Get("enum"); len(enum.Elems()) > 0 {
		return json.RawMessage(enum.Elems()[0].String())
	}
	t, _ := p.Get("type")
	typ, _ := t.AsString()
	for _, e := range t.Elems() {
		if s, _ := e.AsString(); typ == "" && s != "null" {
			typ = s
		}
	}
	switch typ {
	case "integer":
		return 1
	case "number":
		return json.RawMessage("1.5")
	case "boolean":
		return true
	case "array":
		return arr{}
	case "object":
		return obj{}
	case "null":
		return nil
	}
	if !*usedText {
		*usedText = true
		return text
	}
	return "example"
}

// ids derives every id of one answer from the request body, so equal requests get equal ids.
type ids struct{ seed [32]byte }

func newIDs(body []byte) ids { return ids{seed: sha256.Sum256(body)} }

// hex returns prefix + n lowercase hex characters derived from salt.
func (g ids) hex(prefix, salt string, n int) string {
	h := sha256.Sum256(append(g.seed[:], salt...))
	s := hex.EncodeToString(h[:]) + hex.EncodeToString(g.seed[:])
	return prefix + s[:min(n, len(s))]
}

// alnum returns prefix + n characters from [A-Za-z0-9] derived from salt.
func (g ids) alnum(prefix, salt string, n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	h := sha256.Sum256(append(g.seed[:], salt...))
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		b.WriteByte(alphabet[int(h[i%len(h)]+byte(i/len(h)))%len(alphabet)])
	}
	return b.String()
}

// chunks splits s into pieces of about n bytes on rune boundaries, preferring to end a piece
// after a space, as model token streams do. An empty s gives no pieces.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		if len(s) <= n {
			out = append(out, s)
			break
		}
		cut := strings.LastIndexByte(s[:n], ' ')
		if cut <= 0 {
			cut = len(cutBytes(s, n))
			if cut == 0 {
				_, cut = utf8.DecodeRuneInString(s)
			}
		} else {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}
