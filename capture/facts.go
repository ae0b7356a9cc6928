package capture

import (
	"encoding/json"
	"unsafe"

	"github.com/gymtrace/gymtrace/ojson"
)

// ResponseFacts are what the span attributes read of a response object (SPEC §0 "Spans"): the
// gen_ai.response.* attributes, the gen_ai.usage.* counts and the compaction flag. For a body the
// capture splits itself ([PayloadFacts.ResponsePayload]) the split's one pass finds them; for a
// response reassembled from a stream the reassembly gives them (package sdk/stream's
// Capture.ResponseWithFacts, whose ResponseFacts convert to this type).
type ResponseFacts struct {
	// ID is the string "id" member (also when empty); HasID is false when it is absent or not a
	// string.
	ID    string
	HasID bool
	// Model is the "model" member when it is a non-empty string, else "".
	Model string
	// FinishReasons are the non-empty string finish reasons in the order of SPEC §3.2 #9:
	// Anthropic stop_reason, each Chat choice's finish_reason, Responses incomplete_details.reason.
	FinishReasons []string
	// Usage is the JSON text of the "usage" member, nil when absent; the token counts of SPEC §3.5
	// are read from it.
	Usage []byte
	// Compacted reports a Responses output item or an Anthropic content block of type
	// "compaction".
	Compacted bool
}

// PayloadFacts holds what the span attributes need of one call's request and response objects,
// found by the same pass that validates and compacts each body (so no body is walked twice for its
// attributes). Give it to [ExchangeAttributes] with [WithPayloadFacts]; facts of a payload that was
// replaced afterwards (a redactor's edit, say) are not used. The zero value holds no facts. A
// PayloadFacts is for one goroutine.
type PayloadFacts struct {
	req     requestParams
	reqHint bool   // the request has a string ending in "compaction" (requestCompacted)
	reqOf   []byte // the request object the facts are of, nil when none
	resp    ResponseFacts
	respOf  []byte
	// respUsage is resp.Usage as the walk read it (see responseWalk.usageValue), so that the
	// attributes parse no usage text again; nil when the walk read none (a stream's facts).
	respUsage *ojson.Value
	// reqChecked and respChecked say that reqOf and respOf are what RequestPayload and
	// ResponsePayload returned: compact strict JSON object text (see Checked).
	reqChecked, respChecked bool

	walk responseWalk
	w    ojson.Walker // the pass's walker, kept here so that one call allocates it once
}

// RequestPayload is the package's [RequestPayload] that also keeps the request's facts, without the
// copy when body is already compact strict JSON object text (what SDK clients send): the object is
// then body itself, sharing its memory, so a 1 MiB conversation is not held twice. body must never
// be modified afterwards. Any other body gives exactly the package RequestPayload's result.
func (f *PayloadFacts) RequestPayload(body []byte) (obj json.RawMessage, raw *string) {
	f.req, f.reqOf = requestParams{}, nil
	f.w = requestWalker(&f.req)
	obj, raw = sharedPayload(body, &f.w)
	if obj != nil {
		f.reqHint, f.reqOf = f.w.SawSuffix, obj
	}
	f.reqChecked = obj != nil
	return obj, raw
}

// ResponsePayload is [PayloadFacts.RequestPayload] for a response body: the package's
// [ResponsePayload] with the sharing, keeping the response's facts.
func (f *PayloadFacts) ResponsePayload(body []byte) (obj json.RawMessage, raw *string) {
	f.resp, f.respOf, f.respUsage, f.walk = ResponseFacts{}, nil, nil, responseWalk{}
	f.w = responseWalker(&f.walk)
	obj, raw = sharedPayload(body, &f.w)
	if obj != nil {
		f.resp, f.respOf, f.respUsage = f.walk.facts(), obj, f.walk.usageValue()
	}
	f.respChecked = obj != nil
	return obj, raw
}

// Checked reports whether obj is the very request or response object (the same memory, not only
// equal text) that f's RequestPayload or ResponsePayload returned last: text that the pass found,
// or made, compact strict JSON object text within PayloadMaxDepth (SPEC §0 D6), which a writer
// need not check again (see [CheckedBodies]). A reassembled stream's object (SetStreamResponse)
// is not: its text was built, not checked.
func (f *PayloadFacts) Checked(obj []byte) bool {
	return (f.reqChecked && same(f.reqOf, obj)) || (f.respChecked && same(f.respOf, obj))
}

// requestWalker is the walker of a request object: its top-level members go to p, and strings
// ending in "compaction" (quotes included) are noted for requestCompacted.
func requestWalker(p *requestParams) ojson.Walker {
	return ojson.Walker{MaxDepth: PayloadMaxDepth, Depth: 1, Visitor: p, Suffix: `"` + compactionType + `"`}
}

// responseWalker is the walker of a response object: its top-level members and the members of the
// items of its top-level arrays go to r.
func responseWalker(r *responseWalk) ojson.Walker {
	return ojson.Walker{MaxDepth: PayloadMaxDepth, Depth: 3, Visitor: r}
}

// SetStreamResponse records the facts of obj, a response reassembled from a stream.
func (f *PayloadFacts) SetStreamResponse(obj []byte, facts ResponseFacts) {
	f.resp, f.respOf, f.respUsage, f.respChecked = facts, obj, nil, false
}

// request returns the facts of req when they are the facts of exactly that text.
func (f *PayloadFacts) request(req []byte) (*requestParams, bool, bool) {
	if f == nil || !same(f.reqOf, req) {
		return nil, false, false
	}
	return &f.req, f.reqHint, true
}

// response returns the facts of resp when they are the facts of exactly that text, with its usage
// as the walk read it (nil when it read none).
func (f *PayloadFacts) response(resp []byte) (*ResponseFacts, *ojson.Value, bool) {
	if f == nil || !same(f.respOf, resp) {
		return nil, nil, false
	}
	return &f.resp, f.respUsage, true
}

// same reports whether a and b are the same memory (not only equal text).
func same(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// readRequest walks req, a request object, once (validating it) for its facts; false when it is
// not one strict JSON object.
func (f *PayloadFacts) readRequest(req []byte) bool {
	f.req, f.reqOf, f.reqChecked = requestParams{}, nil, false
	if firstNonSpace(req) != '{' {
		return false
	}
	f.w = requestWalker(&f.req)
	if _, err := f.w.Check(req); err != nil {
		return false
	}
	f.reqHint, f.reqOf = f.w.SawSuffix, req
	return true
}

// readResponse walks resp, a response object, once (validating it) for its facts; false when it
// is not one strict JSON object.
func (f *PayloadFacts) readResponse(resp []byte) bool {
	f.resp, f.respOf, f.respUsage, f.respChecked, f.walk = ResponseFacts{}, nil, nil, false, responseWalk{}
	if firstNonSpace(resp) != '{' {
		return false
	}
	f.w = responseWalker(&f.walk)
	if _, err := f.w.Check(resp); err != nil {
		return false
	}
	f.resp, f.respOf, f.respUsage = f.walk.facts(), resp, f.walk.usageValue()
	return true
}

// responseWalk collects a response object's facts from a [ojson.Walker] of depth 3: the top-level
// members, the members of the objects in the choices, output and content arrays, and the usage
// object's members two levels deep.
type responseWalk struct {
	top                                      itemsOf // the top-level member being read, if one of interest
	id, model, stopReason, usage, incomplete []byte  // raw member texts (the last of duplicates)
	choiceReasons                            []string
	outputCompacted, contentCompacted        bool
	item                                     []byte // raw finish_reason / type of the current item

	usageMembers  []ojson.Member // the members of the usage object read so far
	detailMembers []ojson.Member // the members of the usage member's object being read

	// The members above are kept in these arrays while they fit (a usage object has a handful
	// of counts and two detail objects), so that reading it allocates no member slices; the
	// usage Value the walk gives shares them. detailUsed is the part of detailBuf taken by the
	// detail objects already read.
	usageBuf   [8]ojson.Member
	detailBuf  [8]ojson.Member
	detailUsed int
}

// itemsOf names the top-level arrays whose items a responseWalk reads.
type itemsOf uint8

const (
	itemsNone itemsOf = iota
	itemsChoices
	itemsOutput
	itemsContent
	itemsUsage // not an array: the usage object, whose members are read
)

// Visit implements [ojson.Visitor].
func (r *responseWalk) Visit(depth int, key, val []byte) {
	switch depth {
	case 1:
		name, ok := keyName(key)
		if !ok {
			return
		}
		if val == nil {
			r.top, r.item = itemsNone, nil
			switch string(name) {
			case "choices":
				r.top, r.choiceReasons = itemsChoices, r.choiceReasons[:0]
			case "output":
				r.top, r.outputCompacted = itemsOutput, false
			case "content":
				r.top, r.contentCompacted = itemsContent, false
			case "usage":
				r.top, r.usageMembers, r.detailUsed = itemsUsage, r.usageBuf[:0], 0
			}
			return
		}
		r.top = itemsNone
		switch string(name) {
		case "id":
			r.id = val
		case "model":
			r.model = val
		case "stop_reason":
			r.stopReason = val
		case "usage":
			r.usage = val
		case "incomplete_details":
			r.incomplete = val
		}
	case 2:
		if r.top == itemsUsage {
			r.usageMember(key, val)
			return
		}
		item := r.item
		r.item = nil
		if key != nil || item == nil {
			return // a member of a choices/output/content object, not an array's element
		}
		switch r.top {
		case itemsChoices:
			if s, ok := rawString(item); ok && s != "" {
				r.choiceReasons = append(r.choiceReasons, s)
			}
		case itemsOutput:
			r.outputCompacted = r.outputCompacted || isCompactionType(item)
		case itemsContent:
			r.contentCompacted = r.contentCompacted || isCompactionType(item)
		}
	case 3:
		if key == nil || val == nil || r.top == itemsNone {
			return
		}
		if r.top == itemsUsage {
			if name, ok := keyName(key); ok {
				if v, err := ojson.Parse(val); err == nil {
					r.detailMembers = append(r.detailMembers, ojson.Member{Key: usageKey(name), Value: v})
				}
			}
			return
		}
		want := "type"
		if r.top == itemsChoices {
			want = "finish_reason"
		}
		if name, ok := keyName(key); ok && string(name) == want {
			r.item = val
		}
	}
}

// usageValue returns the usage object as the walk read it: its members, each scalar or array as
// parsed and each object as its own members (what extractTokenStats reads); nil when the usage
// member is absent or no object.
func (r *responseWalk) usageValue() *ojson.Value {
	if len(r.usage) == 0 || r.usage[0] != '{' {
		return nil
	}
	v := ojson.Object(r.usageMembers...)
	return &v
}

// usageMember reads a member of the usage object (key, then value): a scalar or an array as
// parsed, an object as the members its own walk events gave (at depth 3).
func (r *responseWalk) usageMember(key, val []byte) {
	if key == nil {
		return // an element: usage is an array, no object (its counts are none)
	}
	if val == nil {
		// A fresh slice of the rest of detailBuf: the objects read before keep their members.
		r.detailMembers = r.detailBuf[r.detailUsed:r.detailUsed:len(r.detailBuf)]
		return
	}
	name, ok := keyName(key)
	if !ok {
		return
	}
	var v ojson.Value
	if val[0] == '{' {
		v = ojson.Object(r.detailMembers...)
		r.detailUsed = min(r.detailUsed+len(r.detailMembers), len(r.detailBuf))
	} else {
		var err error
		if v, err = ojson.Parse(val); err != nil {
			return
		}
	}
	r.usageMembers = append(r.usageMembers, ojson.Member{Key: usageKey(name), Value: v})
}

// usageKeys are the usage member names the three dialects send (SPEC §3.5), each its own key.
var usageKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"prompt_tokens", "completion_tokens", "total_tokens", "input_tokens", "output_tokens",
		"cache_read_input_tokens", "cache_creation_input_tokens", "prompt_tokens_details",
		"completion_tokens_details", "input_tokens_details", "output_tokens_details",
		"cached_tokens", "reasoning_tokens", "audio_tokens",
	} {
		m[k] = k
	}
	return m
}()

// usageKey returns name as a string, without allocating for the names in usageKeys.
func usageKey(name []byte) string {
	if k, ok := usageKeys[string(name)]; ok {
		return k
	}
	return string(name)
}

// isCompactionType reports whether raw is the JSON string "compaction".
func isCompactionType(raw []byte) bool {
	s, ok := rawString(raw)
	return ok && s == compactionType
}

// facts turns what the walk read into [ResponseFacts].
func (r *responseWalk) facts() ResponseFacts {
	var f ResponseFacts
	f.ID, f.HasID = rawString(r.id)
	if s, ok := rawString(r.model); ok && s != "" {
		f.Model = s
	}
	f.FinishReasons = r.choiceReasons // the usual case (Chat) needs no second list
	if s, ok := rawString(r.stopReason); ok && s != "" {
		f.FinishReasons = append([]string{s}, f.FinishReasons...)
	}
	if d, ok := rawValue(r.incomplete); ok {
		if s, ok := get(d, "reason").AsString(); ok && s != "" {
			f.FinishReasons = append(f.FinishReasons, s)
		}
	}
	f.Usage = r.usage
	f.Compacted = r.outputCompacted || r.contentCompacted
	return f
}
