package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/sdk/stream"
	"github.com/gymtrace/gymtrace/semconv"
)

// requestSender sends a POST of body to the upstream path (the /tokenize fallback) and returns
// the answer's status and body.
type requestSender func(path string, body []byte) (status int, respBody []byte, err error)

// tokenizeKeys are the chat request members the reference's adapter copies into its /tokenize
// request (docs/TOKENS.md §1.5 step 3), in this order, when present.
var tokenizeKeys = []string{"model", "messages", "tools", "chat_template_kwargs", "mm_processor_kwargs", "required_prefix_token_ids"}

// adapterCall is what the proxy adds to one chat request of a vLLM or SGLang upstream, and how it
// undoes it in the answer (docs/TOKENS.md §0 T2, §1.5, §7). Only what the client's request lacks
// is added; every addition has its restore rule.
type adapterCall struct {
	source       TokenSource
	fromLogprobs bool
	dialect      string // stream.DialectChat or stream.DialectResponses (vLLM only)
	stream       bool
	inject       []ojson.Member // the members added, in order
	replace      []ojson.Member // the client's members whose value the proxy sets: a null (add), the Responses "include" it extends
	refuse       string         // why this call cannot be captured without changing the client's view
	restore      restoreRules
}

// restoreRules name the answer members the injection caused: set back to null (what vLLM writes
// when they are not asked for) or removed (what is omitted when not asked for).
type restoreRules struct {
	topNull, topRemove, choiceNull, choiceRemove []string
	// dropEmptyDelta: a stream chunk whose only choice has an empty delta and no finish_reason
	// is dropped.
	dropEmptyDelta bool
	// responses: the restore of a vLLM Responses answer (tokenadapter_responses.go); the chat
	// rules above are then empty.
	responses responsesRestore
}

func (r restoreRules) empty() bool {
	return len(r.topNull)+len(r.topRemove)+len(r.choiceNull)+len(r.choiceRemove) == 0 && !r.dropEmptyDelta && !r.responses.any()
}

// newAdapterCall decides the injection for req, the client's request (null when it is not a JSON
// object): chat requests of vLLM and SGLang, Responses requests of vLLM
// (tokenadapter_responses.go). It returns nil when the source adds nothing to any call of this
// dialect.
func newAdapterCall(src TokenSource, fromLogprobs bool, dialect string, req ojson.Value) *adapterCall {
	if req.Kind() != ojson.KindObject {
		return nil
	}
	if src == TokenSourceVLLM && dialect == stream.DialectResponses {
		return newResponsesAdapterCall(fromLogprobs, req)
	}
	if (src != TokenSourceVLLM && src != TokenSourceSGLang) || dialect != stream.DialectChat {
		return nil
	}
	a := &adapterCall{source: src, fromLogprobs: fromLogprobs, dialect: stream.DialectChat}
	if s, ok := req.Get("stream"); ok {
		a.stream, _ = s.AsBool()
	}
	if src == TokenSourceSGLang && a.stream {
		a.refuse = "SGLang streams are not token-captured (TOKENS.md §7); send stream=false"
		return a
	}
	// state: 0 absent or null, 1 true, 2 another value (the client's own choice, kept)
	state := func(key string) int {
		v, ok := req.Get(key)
		switch {
		case !ok || v.IsNull():
			return 0
		case v.Kind() == ojson.KindBool:
			if b, _ := v.AsBool(); b {
				return 1
			}
		}
		return 2
	}
	logprobs := state("logprobs")
	if logprobs == 2 {
		a.refuse = "the client's request sets logprobs to false, so the answer carries no log probabilities"
		return a
	}
	// A null top_logprobs is the client's "unset": the reference removes it (docs/TOKENS.md §1.5
	// step 3) after step 2 set it to 0, so vLLM gets top_logprobs 0; the proxy sets it to 0 in
	// place. vLLM returns log probs only when "request.logprobs and request.top_logprobs is not
	// None" (chat_completion/serving.py), so a client whose own request says logprobs: true with
	// top_logprobs: null gets none from vLLM: for it the log probs are the proxy's doing too,
	// restored to null (T2). SGLang reads a null top_logprobs as 0 ("request.top_logprobs or 0",
	// serving_chat.py): its client's answer does not change.
	topLogprobs, hasTopLogprobs := req.Get("top_logprobs")
	clientLogprobs := logprobs == 1 && !(hasTopLogprobs && topLogprobs.IsNull() && src == TokenSourceVLLM)
	var flags []string
	switch {
	case src == TokenSourceSGLang:
		flags = []string{"return_token_ids", "return_prompt_token_ids"}
	case fromLogprobs:
		if clientLogprobs && state("return_tokens_as_token_ids") != 1 {
			a.refuse = "the client asked for log probs with token text, and this vLLM has no inline ids (WithVLLMTokenIDsFromLogprobs)"
			return a
		}
		flags = []string{"return_tokens_as_token_ids"}
	default:
		flags = []string{"return_token_ids"}
	}
	if logprobs == 0 {
		a.add(req, "logprobs", ojson.Bool(true))
	}
	if !clientLogprobs {
		a.restore.choiceNull = append(a.restore.choiceNull, "logprobs")
	}
	if !hasTopLogprobs || topLogprobs.IsNull() {
		a.add(req, "top_logprobs", ojson.Int(0))
	}
	for _, f := range flags {
		switch state(f) {
		case 1:
			continue
		case 2:
			a.refuse = "the client's request sets " + f + " to a value other than true"
			return a
		}
		a.add(req, f, ojson.Bool(true))
		switch {
		case f == "return_token_ids" && src == TokenSourceVLLM:
			// vLLM passes these members explicitly (None when not asked), and writes a set None as
			// null: model_dump() for the JSON answer, model_dump_json(exclude_unset=True) for each
			// stream chunk (vLLM's chat_completion/serving.py).
			a.restore.topNull = append(a.restore.topNull, "prompt_token_ids")
			a.restore.choiceNull = append(a.restore.choiceNull, "token_ids")
			// vLLM streams a chunk with an empty delta for a token its parsers hold back (a
			// tool-call control token) only when return_token_ids is asked for (serving.py: "if
			// delta_message is None: if finish_reason is None and not request.return_token_ids:
			// continue"), whatever logprobs says; for a client that did not ask, such chunks are
			// the proxy's doing and are dropped.
			a.restore.dropEmptyDelta = a.stream
		case f == "return_token_ids":
			a.restore.choiceRemove = append(a.restore.choiceRemove, "token_ids")
		case f == "return_prompt_token_ids":
			a.restore.choiceRemove = append(a.restore.choiceRemove, "prompt_token_ids")
		}
	}
	return a
}

// add asks for key: value, a member the client's request lacks or sets to null ("adds only what
// the client's request lacks", docs/TOKENS.md §0 T2): a null member's value is replaced in place
// (the last one of that name, the one json.loads keeps), a missing member is appended.
func (a *adapterCall) add(req ojson.Value, key string, value ojson.Value) {
	m := ojson.Member{Key: key, Value: value}
	if _, ok := req.Get(key); ok {
		a.replace = append(a.replace, m)
		return
	}
	a.inject = append(a.inject, m)
}

// active reports whether the proxy adds members to this call's request, so its answer is edited.
func (a *adapterCall) active() bool {
	return a != nil && a.refuse == "" && len(a.inject)+len(a.replace) > 0
}

// reads reports whether the token ids come from the adapter (an active call, or one whose client
// asked for everything itself).
func (a *adapterCall) reads() bool { return a != nil && a.refuse == "" }

// requestBody returns body (a JSON object) with the replaced members' values extended
// (replaceMembers) and the injected members appended before its closing brace; every other byte
// of the client's own members is kept.
func (a *adapterCall) requestBody(body []byte) []byte {
	if len(a.replace) > 0 {
		body = replaceMembers(body, a.replace)
	}
	if len(a.inject) == 0 {
		return body
	}
	end := bytes.LastIndexByte(body, '}')
	if end < 0 {
		return body
	}
	out := make([]byte, 0, len(body)+64)
	out = append(out, body[:end]...)
	empty := len(bytes.TrimSpace(body[bytes.IndexByte(body, '{')+1:end])) == 0
	for i, m := range a.inject {
		if i > 0 || !empty {
			out = append(out, ',')
		}
		out = ojson.AppendString(out, m.Key)
		out = append(out, ':')
		out = m.Value.AppendJSON(out)
	}
	return append(out, body[end:]...)
}

// payload builds, from the upstream's own answer (held by tw), the response object the
// reference's adapter serves (docs/TOKENS.md §1.5 step 4): the chat completion with the token
// bundle on choices[0].message, which tokens.Call.CaptureTokens turns into the entry. sent is the
// request as sent (for /tokenize); a Responses call's is responsesPayload's, built on clientResp,
// the response object the client received. The cause names why it failed.
func (a *adapterCall) payload(tw *tokenWriter, clientResp, sentBody []byte, send requestSender) (servedAnswer, string, error) {
	if a.dialect == stream.DialectResponses {
		return a.responsesPayload(tw, clientResp)
	}
	var resp ojson.Value
	var ids stream.TokenIDs
	var err error
	if tw.sse {
		obj, ok := tw.sc.Response()
		if !ok {
			return servedAnswer{}, semconv.TokensCauseStream, errors.New("the stream could not be reassembled")
		}
		if resp, err = ojson.Parse(obj); err != nil {
			return servedAnswer{}, semconv.TokensCauseStream, err
		}
		if ids, err = tw.acc.Result(); err != nil {
			return servedAnswer{}, semconv.TokensCauseStream, err
		}
		if err = inlineIDsPair(ids.HasPrompt, ids.HasGeneration); err == nil {
			ids, err = a.choose(ids)
		}
	} else {
		// The answer may be hundreds of MiB of ids and log probs: strict JSON is read without a
		// tree (readAnswerLazy), only the members extract reads are built.
		if resp, err = readAnswerLazy(tw.original); err != nil {
			return servedAnswer{}, semconv.TokensCauseNotAnObject, fmt.Errorf("the answer is not JSON: %w", err)
		}
		if resp.Kind() != ojson.KindObject {
			return servedAnswer{}, semconv.TokensCauseNotAnObject, errors.New("the answer is not a JSON object")
		}
		ids, err = a.extract(resp)
	}
	if err != nil {
		return servedAnswer{}, adapterCause(err), err
	}
	if !ids.HasPrompt {
		if ids.Prompt, err = tokenize(sentBody, send); err != nil {
			return servedAnswer{}, adapterCause(err), err
		}
	}
	return servedAnswer{body: servedPayload(resp, nil), ids: &ids, whole: func() []byte { return servedPayload(resp, &ids) }}, "", nil
}

// inlineIDsPair is the reference's rule for vLLM's inline ids (docs/TOKENS.md §1.5 step 2,
// [VL-04]): the top-level prompt_token_ids and the choice's token_ids come both or neither, in a
// streamed answer as in a JSON one; one without the other is the reference's "partial token
// metadata" error. Only with neither are the ids read from the log probs, and the prompt ids
// asked of /tokenize (step 3).
func inlineIDsPair(hasPrompt, hasGeneration bool) error {
	switch {
	case hasPrompt && !hasGeneration:
		return errors.New("vLLM response returned partial token metadata; missing: choice.token_ids.")
	case !hasPrompt && hasGeneration:
		return errors.New("vLLM response returned partial token metadata; missing: prompt_token_ids.")
	}
	return nil
}

// extract reads the ids of a non-streamed answer (docs/TOKENS.md §1.5 steps 2–3 for vLLM, §7 for
// SGLang). The errors are the reference adapter's messages.
func (a *adapterCall) extract(resp ojson.Value) (stream.TokenIDs, error) {
	choices, _ := resp.Get("choices")
	var choice ojson.Value
	if els := choices.Elems(); len(els) > 0 {
		choice = els[0]
	}
	var ids stream.TokenIDs
	if a.source == TokenSourceSGLang {
		p, _ := choice.Get("prompt_token_ids")
		t, _ := choice.Get("token_ids")
		var missing []string
		if p.IsNull() {
			missing = append(missing, "choice.prompt_token_ids")
		}
		if t.IsNull() {
			missing = append(missing, "choice.token_ids")
		}
		if len(missing) > 0 {
			return ids, fmt.Errorf("SGLang response returned no token metadata; missing: %s.", strings.Join(missing, ", "))
		}
		var err error
		if ids.Prompt, err = tokenIDList(p, "choice.prompt_token_ids"); err != nil {
			return ids, err
		}
		if ids.Generation, err = tokenIDList(t, "choice.token_ids"); err != nil {
			return ids, err
		}
		ids.HasPrompt, ids.HasGeneration = true, true
	} else {
		p, _ := resp.Get("prompt_token_ids")
		t, _ := choice.Get("token_ids")
		if err := inlineIDsPair(!p.IsNull(), !t.IsNull()); err != nil {
			return ids, err
		}
		if !p.IsNull() {
			var err error
			if ids.Prompt, err = tokenIDList(p, "prompt_token_ids"); err != nil {
				return ids, err
			}
			if ids.Generation, err = tokenIDList(t, "choice.token_ids"); err != nil {
				return ids, err
			}
			ids.HasPrompt, ids.HasGeneration = true, true
		}
	}
	if msg, _ := choice.Get("message"); msg.Kind() == ojson.KindObject {
		if bundle, found, err := messageBundle(msg); err != nil {
			return ids, err
		} else if found {
			if ids.HasPrompt && (!slices.Equal(ids.Prompt, bundle.Prompt) || !slices.Equal(ids.Generation, bundle.Generation)) {
				return ids, errors.New("Message-level token metadata disagrees with vLLM response token IDs.")
			}
			return a.choose(bundle)
		}
	}
	lp, _ := choice.Get("logprobs")
	content, _ := lp.Get("content")
	if content.Kind() != ojson.KindArray {
		return ids, fmt.Errorf("gymtrace proxy requested per-token logprobs from %s (logprobs=True, top_logprobs=0), but the response had none (choice.logprobs=%s). Cannot extract token ids or logprobs.", a.source, lp.String())
	}
	i := 0
	for e := range content.Elements() { // one element built at a time (a lazy answer)
		f, id, isID, err := stream.LogProbEntry(e, i)
		if err != nil {
			return ids, err
		}
		ids.NoteLogProb(i, f, id, isID)
		i++
	}
	return a.choose(ids)
}

// messageBundle reads a token bundle already on the assistant message, a framework's
// (TOKENS.md §1.5 step 1): any of its three keys makes all three required.
func messageBundle(msg ojson.Value) (ids stream.TokenIDs, found bool, err error) {
	names := []string{"generation_log_probs", "generation_token_ids", "prompt_token_ids"} // sorted
	var missing []string
	for _, n := range names {
		if _, ok := msg.Get(n); ok {
			found = true
		} else {
			missing = append(missing, n)
		}
	}
	if !found {
		return ids, false, nil
	}
	if len(missing) > 0 {
		return ids, true, fmt.Errorf("choice.message returned partial token metadata; missing: %s.", strings.Join(missing, ", "))
	}
	p, _ := msg.Get("prompt_token_ids")
	g, _ := msg.Get("generation_token_ids")
	l, _ := msg.Get("generation_log_probs")
	if ids.Prompt, err = tokenIDList(p, "choice.message.prompt_token_ids"); err != nil {
		return ids, true, err
	}
	if ids.Generation, err = tokenIDList(g, "choice.message.generation_token_ids"); err != nil {
		return ids, true, err
	}
	if l.Kind() != ojson.KindArray {
		return ids, true, errors.New("`choice.message.generation_log_probs` must be a list of numeric log probabilities.")
	}
	for e := range l.Elements() {
		f, ok := e.Float64()
		if !ok || e.Kind() != ojson.KindNumber {
			return ids, true, errors.New("`choice.message.generation_log_probs` must be a list of numeric log probabilities.")
		}
		ids.LogProbs = append(ids.LogProbs, f)
	}
	ids.HasPrompt, ids.HasGeneration = true, true
	return ids, true, nil
}

// noInlineIDsError is choose's error for a vLLM answer without inline generated ids whose log-prob
// tokens are text: the reference's message, and a kind the proxy's log turns into a hint.
type noInlineIDsError struct{ msg string }

func (e *noInlineIDsError) Error() string { return e.msg }

// choose settles the generated ids: the inline ones (checked against "token_id:<n>" log-prob
// tokens when those are ids), else the log-prob tokens' ids; and checks the lengths and that every
// log prob is finite (docs/TOKENS.md §0 T7).
func (a *adapterCall) choose(ids stream.TokenIDs) (stream.TokenIDs, error) {
	switch {
	case ids.HasGeneration:
		if a.source == TokenSourceVLLM && ids.LogProbIDs && !slices.Equal(ids.Generation, ids.LogProbTokenID) {
			return ids, errors.New("vLLM response generation token IDs disagree with choice logprob token IDs.")
		}
	case a.source == TokenSourceVLLM:
		if len(ids.LogProbs) > 0 && !ids.LogProbIDs {
			return ids, &noInlineIDsError{msg: fmt.Sprintf("choice.logprobs.content[%d].token must use the `token_id:<int>` format.", ids.FirstText)}
		}
		ids.Generation = ids.LogProbTokenID
	}
	if len(ids.Generation) != len(ids.LogProbs) {
		return ids, fmt.Errorf("vLLM token transport returned mismatched generation token IDs and log probabilities: %d token IDs and %d log probabilities.", len(ids.Generation), len(ids.LogProbs))
	}
	if err := finiteLogProbs(ids.LogProbs); err != nil {
		return ids, err
	}
	if ids.Generation == nil {
		ids.Generation = []int64{}
	}
	if ids.LogProbs == nil {
		ids.LogProbs = []float64{}
	}
	return ids, nil
}

// tokenize asks the upstream for the prompt ids of the request as sent (POST /tokenize,
// docs/TOKENS.md §1.5 step 3).
func tokenize(sentBody []byte, send requestSender) ([]int64, error) {
	req, err := ojson.Parse(sentBody)
	if err != nil {
		return nil, fmt.Errorf("tokenize: the request is not JSON: %w", err)
	}
	var ms []ojson.Member
	for _, k := range tokenizeKeys {
		if v, ok := req.Get(k); ok {
			ms = append(ms, ojson.Member{Key: k, Value: v})
		}
	}
	status, body, err := send("/tokenize", ojson.Object(ms...).AppendJSON(nil))
	if err != nil {
		return nil, fmt.Errorf("tokenize: %w", err)
	}
	if status != 200 {
		return nil, fmt.Errorf("tokenize: the upstream answered HTTP %d", status)
	}
	v, err := readAnswer(body)
	if err != nil {
		return nil, fmt.Errorf("tokenize: the answer is not JSON: %w", err)
	}
	t, _ := v.Get("tokens")
	return tokenIDList(t, "tokens")
}

// servedPayload is resp with the token bundle on choices[0].message (and the raw token members
// removed), the shape tokens.EntryFromResponse reads (docs/TOKENS.md §1.5 step 4, §3.1); with ids
// nil, the bundle's three lists are empty (servedAnswer).
func servedPayload(resp ojson.Value, ids *stream.TokenIDs) []byte {
	choices, _ := resp.Get("choices")
	var msg ojson.Value
	for c := range choices.Elements() {
		msg, _ = c.Get("message")
		break
	}
	var ms []ojson.Member
	if msg.Kind() == ojson.KindObject {
		for _, m := range msg.Members() {
			switch m.Key {
			case "prompt_token_ids", "generation_token_ids", "generation_log_probs", "token_ids":
				continue
			}
			ms = append(ms, m)
		}
	}
	ms = append(ms, bundleMembers(ids)...)
	model, _ := resp.Get("model")
	out := ojson.Object(
		ojson.Member{Key: "model", Value: model},
		ojson.Member{Key: "choices", Value: ojson.Array(ojson.Object(ojson.Member{Key: "message", Value: ojson.Object(ms...)}))})
	return out.AppendJSON(nil)
}

// bundleMembers are the token bundle's three members holding ids, or empty lists for ids nil.
func bundleMembers(ids *stream.TokenIDs) []ojson.Member {
	var p, g []int64
	var l []float64
	if ids != nil {
		p, g, l = ids.Prompt, ids.Generation, ids.LogProbs
	}
	return []ojson.Member{
		{Key: "prompt_token_ids", Value: intsValue(p)},
		{Key: "generation_token_ids", Value: intsValue(g)},
		{Key: "generation_log_probs", Value: floatsValue(l)}}
}

func intsValue(xs []int64) ojson.Value {
	vs := make([]ojson.Value, len(xs))
	for i, x := range xs {
		vs[i] = ojson.Int(x)
	}
	return ojson.Array(vs...)
}

func floatsValue(xs []float64) ojson.Value {
	vs := make([]ojson.Value, len(xs))
	for i, x := range xs {
		vs[i] = ojson.Float(x)
	}
	return ojson.Array(vs...)
}
