package stream

import "github.com/gymtrace/gymtrace/ojson"

// ResponseFacts are what a model-call span's attributes read of a reassembled response (SPEC §0
// "Spans"), taken from the reassembled value. It converts to capture.ResponseFacts (same fields).
type ResponseFacts struct {
	// ID is the response's string "id" (also when empty); HasID is false when it has none.
	ID    string
	HasID bool
	// Model is the response's "model" when it is a non-empty string, else "".
	Model string
	// FinishReasons are the non-empty string finish reasons in the order of SPEC §3.2 #9:
	// Anthropic stop_reason, each Chat choice's finish_reason, Responses incomplete_details.reason.
	FinishReasons []string
	// Usage is the response's "usage" as compact JSON text, nil when it has none.
	Usage []byte
	// Compacted reports a Responses output item or Anthropic content block of type "compaction".
	Compacted bool
}

// ResponseWithFacts is [Capture.Response] together with the response's [ResponseFacts], read from
// the same reassembled value.
func (c *Capture) ResponseWithFacts() (obj []byte, facts ResponseFacts, ok bool) {
	v, ok := c.result()
	if !ok {
		return nil, ResponseFacts{}, false
	}
	return v.AppendJSON(make([]byte, 0, v.SizeHint())), factsOf(v), true
}

// factsOf reads the facts of a reassembled response object.
func factsOf(v ojson.Value) ResponseFacts {
	var f ResponseFacts
	f.ID, f.HasID = getString(v, "id")
	if s, ok := getString(v, "model"); ok && s != "" {
		f.Model = s
	}
	if s, ok := getString(v, "stop_reason"); ok && s != "" {
		f.FinishReasons = append(f.FinishReasons, s)
	}
	if ch, ok := v.Get("choices"); ok {
		for _, c := range ch.Elems() {
			if s, ok := getString(c, "finish_reason"); ok && s != "" {
				f.FinishReasons = append(f.FinishReasons, s)
			}
		}
	}
	if d, ok := v.Get("incomplete_details"); ok {
		if s, ok := getString(d, "reason"); ok && s != "" {
			f.FinishReasons = append(f.FinishReasons, s)
		}
	}
	if u, ok := v.Get("usage"); ok {
		f.Usage = u.AppendJSON(nil)
	}
	f.Compacted = hasCompaction(v, "output") || hasCompaction(v, "content")
	return f
}

// hasCompaction reports whether the array v[key] has an object of type "compaction".
func hasCompaction(v ojson.Value, key string) bool {
	items, _ := v.Get(key)
	for _, it := range items.Elems() {
		if s, ok := getString(it, "type"); ok && s == "compaction" {
			return true
		}
	}
	return false
}
