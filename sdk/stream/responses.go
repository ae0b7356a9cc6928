package stream

import "github.com/gymtrace/gymtrace/ojson"

// responsesState reassembles an OpenAI Responses stream (SPEC.md §4.4): the `response` object of
// the last event of type response.completed, response.incomplete or response.failed, else of the
// last event that has one. Only the two candidates are kept.
type responsesState struct {
	final    ojson.Value
	hasFinal bool
	last     ojson.Value
	hasLast  bool
}

// add folds one event in, keeping a clone of its response object (the event's memory is reused).
func (s *responsesState) add(ev ojson.Value) {
	resp, ok := getObject(ev, "response")
	if !ok {
		return
	}
	resp = resp.Clone()
	s.last, s.hasLast = resp, true
	typ, _ := getString(ev, "type")
	switch typ {
	case "response.completed", "response.incomplete", "response.failed":
		s.final, s.hasFinal = resp, true
	}
}

func (s *responsesState) result() (ojson.Value, bool) {
	if s.hasFinal {
		return s.final, true
	}
	return s.last, s.hasLast
}
