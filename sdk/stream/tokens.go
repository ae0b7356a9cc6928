package stream

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/ojson"
)

// TokenIDs are the token ids and log probabilities of one sampled call (docs/TOKENS.md §1.5): the
// full prompt, the generated tokens and one log probability per generated token.
type TokenIDs struct {
	Prompt        []int64
	Generation    []int64
	LogProbs      []float64
	HasPrompt     bool // the stream (or response) carried prompt ids
	HasGeneration bool // it carried inline generation ids (vLLM's token_ids)
	// LogProbTokenID is, per log-prob entry, the id its token names as "token_id:<n>" (0 when the
	// token is text).
	LogProbTokenID []int64
	// LogProbIDs reports that every log-prob entry named its token as "token_id:<n>"
	// (vLLM's return_tokens_as_token_ids), so LogProbTokenID holds the ids in order; otherwise
	// FirstText is the index of the first entry that did not.
	LogProbIDs bool
	FirstText  int
}

// TokenAccumulator collects the token ids vLLM streams in a Chat Completions SSE response
// (docs/TOKENS.md §0 T3): prompt_token_ids at the top level of the first chunk, and per chunk the
// choice's token_ids (the chunk's generated ids) and logprobs.content (one entry per generated
// token). Feed it each event's data, in order; [TokenAccumulator.Result] gives the ids once the
// stream ended with "[DONE]". Only choice index 0 is read: a token-captured call has n = 1, and a
// chunk of another choice is an error. The zero value is ready to use; not safe for concurrent use.
type TokenAccumulator struct {
	ids     TokenIDs
	lpCount int
	done    bool
	err     error
	events  int
}

// Feed reads one SSE event's data (without the "data: " field name). "[DONE]" ends the stream;
// data that is not a JSON object is an error that Result reports (the first one wins). The data is
// read in one validating pass ([ojson.ParseLazy]) that builds only the members read; it is not
// retained.
func (a *TokenAccumulator) Feed(data []byte) {
	if a.err != nil {
		return
	}
	a.events++
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		a.done = true
		return
	}
	if a.done {
		a.err = errors.New("a chunk after [DONE]")
		return
	}
	v, err := ojson.ParseLazy(data)
	if err != nil || v.Kind() != ojson.KindObject {
		a.err = fmt.Errorf("chunk %d is not a JSON object", a.events)
		return
	}
	a.chunk(v)
}

// FeedObject reads one SSE event's data that the caller already parsed and found to be a JSON
// object (with [ojson.Parse] or [ojson.ParseLazy]), exactly as Feed reads that data: a caller
// that reads the chunk itself (the proxy's restore, docs/TOKENS.md §0 T2) so parses it once for
// both. v is not retained.
func (a *TokenAccumulator) FeedObject(v ojson.Value) {
	if a.err != nil {
		return
	}
	a.events++
	if a.done {
		a.err = errors.New("a chunk after [DONE]")
		return
	}
	a.chunk(v)
}

// The members a chunk and its choices are read for ([TokenAccumulator.chunk]).
var (
	chunkKeys  = []string{"prompt_token_ids", "choices"}
	choiceKeys = []string{"index", "token_ids", "logprobs"}
)

// chunk reads the ids of one chat chunk, a JSON object: each level is read once
// ([ojson.Value.GetEach]), which for raw text ([ojson.ParseLazy]) is one scan where each Get
// would be another.
func (a *TokenAccumulator) chunk(v ojson.Value) {
	var top [2]ojson.Value
	var topOK [2]bool
	v.GetEach(chunkKeys, top[:], topOK[:])
	if p, ok := top[0], topOK[0]; ok && !p.IsNull() {
		ids, err := TokenIDList(p, "prompt_token_ids")
		if err != nil {
			a.err = err
			return
		}
		if a.ids.HasPrompt {
			a.err = errors.New("prompt_token_ids in more than one chunk")
			return
		}
		a.ids.Prompt, a.ids.HasPrompt = ids, true
	}
	for c := range top[1].Elements() {
		var m [3]ojson.Value
		var mOK [3]bool
		c.GetEach(choiceKeys, m[:], mOK[:])
		if idx, ok := m[0], mOK[0]; ok {
			if n, _ := idx.Int64(); n != 0 {
				a.err = fmt.Errorf("a chunk of choice %s: a token-captured call has n=1", idx.String())
				return
			}
		}
		if t, ok := m[1], mOK[1]; ok && !t.IsNull() {
			ids, err := TokenIDList(t, "choices[0].token_ids")
			if err != nil {
				a.err = err
				return
			}
			a.ids.Generation = append(a.ids.Generation, ids...)
			a.ids.HasGeneration = true
		}
		content, ok := m[2].Get("content")
		if !ok || content.IsNull() {
			continue
		}
		if content.Kind() != ojson.KindArray {
			a.err = errors.New("choices[0].logprobs.content is not a list")
			return
		}
		for e := range content.Elements() {
			f, id, isID, err := LogProbEntry(e, a.lpCount)
			if err != nil {
				a.err = err
				return
			}
			a.ids.NoteLogProb(a.lpCount, f, id, isID)
			a.lpCount++
		}
	}
}

// Result returns what the stream carried, or why its ids cannot be completed: a chunk that broke
// the rules above, or a stream that did not end with "[DONE]" (truncated or disconnected).
func (a *TokenAccumulator) Result() (TokenIDs, error) {
	if a.err != nil {
		return TokenIDs{}, a.err
	}
	if !a.done {
		return TokenIDs{}, errors.New("the stream ended before [DONE]")
	}
	return a.ids, nil
}

// noteToken records whether log-prob entry i named its token as an id.
func (t *TokenIDs) noteToken(i int, isID bool) {
	if i == 0 {
		t.LogProbIDs = true
	}
	if t.LogProbIDs && !isID {
		t.LogProbIDs, t.FirstText = false, i
	}
}

// NoteLogProb appends log-prob entry i (read by [LogProbEntry]) to t.
func (t *TokenIDs) NoteLogProb(i int, logprob float64, id int64, isID bool) {
	t.noteToken(i, isID)
	t.LogProbs = append(t.LogProbs, logprob)
	t.LogProbTokenID = append(t.LogProbTokenID, id)
}

// LogProbEntry reads entry i of a choice's logprobs.content (docs/TOKENS.md §1.5 step 3): an
// object whose logprob is a number (not a boolean). id is the token id when the token is vLLM's
// "token_id:<n>" text (isID true). The errors are the reference adapter's messages.
func LogProbEntry(e ojson.Value, i int) (logprob float64, id int64, isID bool, err error) {
	if e.Kind() != ojson.KindObject {
		return 0, 0, false, fmt.Errorf("choice.logprobs.content[%d] must be an object.", i)
	}
	if tok, ok := e.Get("token"); ok {
		if s, ok := tok.AsString(); ok {
			if rest, found := strings.CutPrefix(s, "token_id:"); found {
				if n, perr := strconv.ParseInt(rest, 10, 64); perr == nil {
					id, isID = n, true
				}
			}
		}
	}
	lp, _ := e.Get("logprob")
	if lp.Kind() != ojson.KindNumber {
		return 0, 0, false, fmt.Errorf("choice.logprobs.content[%d].logprob must be numeric.", i)
	}
	f, ok := lp.Float64()
	if !ok {
		return 0, 0, false, fmt.Errorf("choice.logprobs.content[%d].logprob must be numeric.", i)
	}
	return f, id, isID, nil
}

// TokenIDList reads a JSON list of integer token ids; the error names the member name (the
// reference adapter's message).
func TokenIDList(v ojson.Value, name string) ([]int64, error) {
	if v.Kind() != ojson.KindArray {
		return nil, fmt.Errorf("`%s` must be a list of integer token IDs.", name)
	}
	var out []int64
	if !v.IsEmpty() {
		out = make([]int64, 0, 16)
	} else {
		out = []int64{}
	}
	for e := range v.Elements() {
		n, ok := e.Int64()
		if !ok || !e.IsInteger() {
			return nil, fmt.Errorf("`%s` must be a list of integer token IDs.", name)
		}
		out = append(out, n)
	}
	return out, nil
}
