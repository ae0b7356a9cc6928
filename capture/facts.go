package capture

import (
	"encoding/json"
	"unsafe"

	"github.com/gymtrace/gymtrace/internal/ojson"
)

// ResponseFacts are what the span attributes read of a response object (SPEC §0 "Spans"): the
// gen_ai.response.* attributes, the gen_ai.usage.* counts and the compaction flag. For a body the
// capture splits itself ([PayloadFacts.ResponsePayload]) the split's one pass finds them; for a
// response reassembled from a stream the reassembly gives them (package sdk/stream's
// Capture.Facts, whose result converts to this type).
type ResponseFacts struct {
	// ID is the string "id" member (also when empty), nil when absent or not a string.
	ID *string
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
}

// RequestPayload is [SharedRequestPayload] that also keeps the request's facts.
func (f *PayloadFacts) RequestPayload(body []byte) (obj json.RawMessage, raw *string) {
	f.req, f.reqOf = requestParams{}, nil
	w := ojson.Walker{MaxDepth: PayloadMaxDepth, Depth: 1, Visit: f.req.visit, Suffix: `"` + compactionType + `"`}
	obj, raw = sharedPayload(body, &w)
	if obj != nil {
		f.reqHint, f.reqOf = w.SawSuffix, obj
	}
	return obj, raw
}

// ResponsePayload is [SharedResponsePayload] that also keeps the response's facts.
func (f *PayloadFacts) ResponsePayload(body []byte) (obj json.RawMessage, raw *string) {
	var r responseWalk
	w := ojson.Walker{MaxDepth: PayloadMaxDepth, Depth: 3, Visit: r.visit}
	f.resp, f.respOf = ResponseFacts{}, nil
	obj, raw = sharedPayload(body, &w)
	if obj != nil {
		f.resp, f.respOf = r.facts(), obj
	}
	return obj, raw
}

// SetStreamResponse records the facts of obj, a response reassembled from a stream.
func (f *PayloadFacts) SetStreamResponse(obj []byte, facts ResponseFacts) {
	f.resp, f.respOf = facts, obj
}

// request returns the facts of req when they are the facts of exactly that text.
func (f *PayloadFacts) request(req []byte) (*requestParams, bool, bool) {
	if f == nil || !same(f.reqOf, req) {
		return nil, false, false
	}
	return &f.req, f.reqHint, true
}

// response returns the facts of resp when they are the facts of exactly that text.
func (f *PayloadFacts) response(resp []byte) (*ResponseFacts, bool) {
	if f == nil || !same(f.respOf, resp) {
		return nil, false
	}
	return &f.resp, true
}

// same reports whether a and b are the same memory (not only equal text).
func same(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// requestFacts walks a request object once (validating it) for its facts; ok is false when it is
// not one strict JSON object.
func requestFacts(req []byte) (p requestParams, compactionHint, ok bool) {
	if firstNonSpace(req) != '{' {
		return p, false, false
	}
	w := ojson.Walker{MaxDepth: PayloadMaxDepth, Depth: 1, Visit: p.visit, Suffix: `"` + compactionType + `"`}
	if _, err := w.Check(req); err != nil {
		return requestParams{}, false, false
	}
	return p, w.SawSuffix, true
}

// responseFacts walks a response object once (validating it) for its facts; ok is false when it is
// not one strict JSON object.
func responseFacts(resp []byte) (ResponseFacts, bool) {
	if firstNonSpace(resp) != '{' {
		return ResponseFacts{}, false
	}
	var r responseWalk
	w := ojson.Walker{MaxDepth: PayloadMaxDepth, Depth: 3, Visit: r.visit}
	if _, err := w.Check(resp); err != nil {
		return ResponseFacts{}, false
	}
	return r.facts(), true
}

// responseWalk collects a response object's facts from a [ojson.Walker] of depth 3: the top-level
// members, and the members of the objects in the choices, output and content arrays.
type responseWalk struct {
	top                                      string // the top-level member being read
	id, model, stopReason, usage, incomplete []byte // raw member texts (the last of duplicates)
	choiceReasons                            []string
	outputCompacted, contentCompacted        bool
	item                                     []byte // raw finish_reason / type of the current item
}

func (r *responseWalk) visit(depth int, key, val []byte) {
	switch depth {
	case 1:
		name, ok := keyName(key)
		if !ok {
			return
		}
		if val == nil {
			r.top = string(name)
			r.item = nil
			switch r.top {
			case "choices":
				r.choiceReasons = r.choiceReasons[:0]
			case "output":
				r.outputCompacted = false
			case "content":
				r.contentCompacted = false
			}
			return
		}
		r.top = ""
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
		item := r.item
		r.item = nil
		if key != nil || item == nil {
			return // a member of a choices/output/content object, not an array's element
		}
		switch r.top {
		case "choices":
			if s, ok := rawString(item); ok && s != "" {
				r.choiceReasons = append(r.choiceReasons, s)
			}
		case "output", "content":
			if s, ok := rawString(item); ok && s == compactionType {
				if r.top == "output" {
					r.outputCompacted = true
				} else {
					r.contentCompacted = true
				}
			}
		}
	case 3:
		if key == nil || val == nil {
			return
		}
		want := "type"
		switch r.top {
		case "choices":
			want = "finish_reason"
		case "output", "content":
		default:
			return
		}
		if name, ok := keyName(key); ok && string(name) == want {
			r.item = val
		}
	}
}

// facts turns what the walk read into [ResponseFacts].
func (r *responseWalk) facts() ResponseFacts {
	var f ResponseFacts
	if s, ok := rawString(r.id); ok {
		f.ID = &s
	}
	if s, ok := rawString(r.model); ok && s != "" {
		f.Model = s
	}
	if s, ok := rawString(r.stopReason); ok && s != "" {
		f.FinishReasons = append(f.FinishReasons, s)
	}
	f.FinishReasons = append(f.FinishReasons, r.choiceReasons...)
	if d, ok := rawValue(r.incomplete); ok {
		if s, ok := get(d, "reason").AsString(); ok && s != "" {
			f.FinishReasons = append(f.FinishReasons, s)
		}
	}
	f.Usage = r.usage
	f.Compacted = r.outputCompacted || r.contentCompacted
	return f
}
