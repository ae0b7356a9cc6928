package stream

import (
	"cmp"
	"slices"

	"github.com/gymtrace/gymtrace/internal/growbuf"
	"github.com/gymtrace/gymtrace/ojson"
)

// chatState reassembles a Chat Completions stream (SPEC.md §4.5 with §0 D9): one choice per
// `index`, each with its own role, content, reasoning, tool-call slots and finish_reason; model,
// id and usage are shared. With a single choice at index 0 the result is §4.5's exactly. Values
// read with getTruthy are never null, so null stands for "not seen".
type chatState struct {
	model ojson.Value
	id    string
	hasID bool
	usage ojson.Value

	choices map[int64]*chatChoice
	order   []*chatChoice // creation order; sorted by index when the result is built

	tools []toolDelta // scratch for the tool-call deltas of one choice, reused
}

type chatChoice struct {
	index     int64
	role      ojson.Value
	content   []byte
	reasoning []byte
	finish    ojson.Value
	tools     map[int64]*toolSlot
	toolOrder []*toolSlot
}

type toolSlot struct {
	index int64
	id    ojson.Value // null until a truthy id arrives
	name  ojson.Value // "" until a truthy name arrives (replaced, not appended: SPEC §4.5)
	args  []byte      // concatenated
}

// add folds one chunk into the state, keeping clones, and returns the number of parts it skipped:
// a `choices` that is not a list, or a choice that breaks the shapes §4.5 relies on (not an
// object, a non-integer index, a delta, tool call or function that is not an object, a
// `tool_calls` that is not a list). A skipped choice leaves the state untouched (the reference
// would lose the whole response). Values of another type where §4.5 joins strings are read (D13).
func (s *chatState) add(chunk ojson.Value) (skipped int) {
	if v, ok := getTruthy(chunk, "model"); ok {
		s.model = v.Clone()
	}
	if v, ok := getString(chunk, "id"); ok {
		s.id, s.hasID = v, true
	}
	if v, ok := getTruthy(chunk, "usage"); ok {
		s.usage = v.Clone()
	}
	choices, ok := getTruthy(chunk, "choices")
	if !ok {
		return 0
	}
	if choices.Kind() != ojson.KindArray {
		return 1
	}
	for _, c := range choices.Elems() {
		if !s.addChoice(c) {
			skipped++
		}
	}
	return skipped
}

// chatDelta is one choice's validated delta. Every value is the truthy delta member, null when
// absent or falsy; content, reasoning and a tool's args may be of any JSON type (SPEC §0 D13).
type chatDelta struct {
	index     int64
	role      ojson.Value
	content   ojson.Value
	reasoning ojson.Value
	tools     []toolDelta
	finish    ojson.Value
}

type toolDelta struct {
	index          int64
	id, name, args ojson.Value
}

// addChoice validates one choice object, then applies it; false means it was skipped.
func (s *chatState) addChoice(c ojson.Value) bool {
	d, ok := parseChatChoice(c, s.tools[:0])
	defer func() {
		// Keep the scratch, without references into the event.
		clear(d.tools)
		s.tools = d.tools[:0]
	}()
	if !ok {
		return false
	}
	ch := s.choices[d.index]
	if ch == nil {
		if s.choices == nil {
			s.choices = make(map[int64]*chatChoice)
		}
		ch = &chatChoice{index: d.index, role: ojson.String("assistant")}
		s.choices[d.index] = ch
		s.order = append(s.order, ch)
	}
	if !d.role.IsNull() {
		ch.role = d.role.Clone()
	}
	ch.addContent(d.content)
	ch.reasoning = appendText(ch.reasoning, d.reasoning)
	for _, td := range d.tools {
		slot := ch.tools[td.index]
		if slot == nil {
			if ch.tools == nil {
				ch.tools = make(map[int64]*toolSlot)
			}
			slot = &toolSlot{index: td.index, name: ojson.String("")}
			ch.tools[td.index] = slot
			ch.toolOrder = append(ch.toolOrder, slot)
		}
		if !td.id.IsNull() {
			slot.id = textValue(td.id)
		}
		if !td.name.IsNull() {
			slot.name = textValue(td.name)
		}
		slot.args = appendText(slot.args, td.args)
	}
	if !d.finish.IsNull() {
		ch.finish = d.finish.Clone()
	}
	return true
}

// parseChatChoice reads one choice per SPEC §4.5 without changing any state. Its tool-call deltas
// are appended to tools (a scratch slice, may be nil).
func parseChatChoice(c ojson.Value, tools []toolDelta) (d chatDelta, ok bool) {
	d.tools = tools
	if d.index, ok = indexedObject(c); !ok {
		return d, false
	}
	d.finish, _ = getTruthy(c, "finish_reason")
	delta, present, ok := truthyOf(c, "delta", ojson.KindObject)
	if !present || !ok {
		return d, ok // `choice.delta or {}`
	}
	d.role, _ = getTruthy(delta, "role")
	d.content, _ = getTruthy(delta, "content")
	if d.reasoning, ok = getTruthy(delta, "reasoning_content"); !ok {
		d.reasoning, _ = getTruthy(delta, "reasoning")
	}
	tcs, present, ok := truthyOf(delta, "tool_calls", ojson.KindArray)
	if !present || !ok {
		return d, ok
	}
	for _, tc := range tcs.Elems() {
		t, ok := parseToolDelta(tc)
		if !ok {
			return d, false
		}
		d.tools = append(d.tools, t)
	}
	return d, true
}

// parseToolDelta reads one tool-call delta per SPEC §4.5 (index default 0).
func parseToolDelta(tc ojson.Value) (t toolDelta, ok bool) {
	if t.index, ok = indexedObject(tc); !ok {
		return t, false
	}
	t.id, _ = getTruthy(tc, "id")
	fn, present, ok := truthyOf(tc, "function", ojson.KindObject)
	if !present || !ok {
		return t, ok
	}
	t.name, _ = getTruthy(fn, "name")
	t.args, _ = getTruthy(fn, "arguments")
	return t, true
}

// indexedObject checks that v is an object and reads its "index" (default 0, SPEC §4.5, D9).
func indexedObject(v ojson.Value) (int64, bool) {
	if v.Kind() != ojson.KindObject {
		return 0, false
	}
	return index(v, "index", 0)
}

// truthyOf returns obj[key] when it is truthy (present true); ok is false when it is truthy but
// not of kind k, a shape §4.5 cannot use.
func truthyOf(obj ojson.Value, key string, k ojson.Kind) (v ojson.Value, present, ok bool) {
	v, present = getTruthy(obj, key)
	return v, present, !present || v.Kind() == k
}

// addContent appends one delta.content (SPEC §4.5, §0 D13): of a list of content parts, each
// {"type":"text"} part's text goes to the content and each {"type":"thinking"} part's "thinking"
// (or the "text" members of its "thinking" list) to the reasoning, other parts nowhere (they stay in
// response_raw); any other value goes through appendText.
func (ch *chatChoice) addContent(v ojson.Value) {
	if v.Kind() != ojson.KindArray {
		ch.content = appendText(ch.content, v)
		return
	}
	for _, part := range v.Elems() {
		typ, _ := getString(part, "type")
		switch typ {
		case "text":
			text, _ := part.Get("text")
			ch.content = appendText(ch.content, text)
		case "thinking":
			th, _ := part.Get("thinking")
			if th.Kind() != ojson.KindArray {
				ch.reasoning = appendText(ch.reasoning, th)
				continue
			}
			for _, e := range th.Elems() {
				text, _ := e.Get("text")
				ch.reasoning = appendText(ch.reasoning, text)
			}
		}
	}
}

// appendText appends v where SPEC §4.5 concatenates strings, read as §0 D13 says: a string as its
// text, null as nothing, any other value as its compact JSON text as sent.
func appendText(dst []byte, v ojson.Value) []byte {
	switch v.Kind() {
	case ojson.KindNull:
		return dst
	case ojson.KindString:
		s, _ := v.AsString()
		return growbuf.Append(dst, s)
	}
	return v.AppendJSON(dst)
}

// textValue is a truthy tool-call id or function name as the slot keeps it (SPEC §4.5, §0 D13): a
// string as itself, any other value as the string of its compact JSON text.
func textValue(v ojson.Value) ojson.Value {
	if v.Kind() == ojson.KindString {
		return v.Clone()
	}
	return ojson.String(string(v.AppendJSON(nil)))
}

// finished reports SPEC §0 D8's condition: at least one choice was seen and every choice seen
// got a non-empty string finish_reason.
func (s *chatState) finished() bool {
	if len(s.order) == 0 {
		return false
	}
	for _, ch := range s.order {
		if r, ok := ch.finish.AsString(); !ok || r == "" {
			return false
		}
	}
	return true
}

// result builds the reassembled object, or false when no choice was ever seen (SPEC §4.5).
// Key order: object, model, choices, then id and usage when seen.
func (s *chatState) result() (ojson.Value, bool) {
	if len(s.order) == 0 {
		return ojson.Value{}, false
	}
	order := slices.Clone(s.order)
	slices.SortFunc(order, func(a, b *chatChoice) int { return cmp.Compare(a.index, b.index) })
	choices := make([]ojson.Value, 0, len(order))
	for _, ch := range order {
		choices = append(choices, ch.value())
	}
	ms := []ojson.Member{
		{Key: "object", Value: ojson.String("chat.completion")},
		{Key: "model", Value: s.model},
		{Key: "choices", Value: ojson.Array(choices...)},
	}
	if s.hasID {
		ms = append(ms, ojson.Member{Key: "id", Value: ojson.String(s.id)})
	}
	if !s.usage.IsNull() {
		ms = append(ms, ojson.Member{Key: "usage", Value: s.usage})
	}
	return ojson.Object(ms...), true
}

// value builds one choice: index, message (role, content, reasoning_content, tool_calls), finish_reason.
func (ch *chatChoice) value() ojson.Value {
	content := ojson.Null()
	if len(ch.content) > 0 {
		content = ojson.String(accumulated(ch.content))
	}
	msg := []ojson.Member{
		{Key: "role", Value: ch.role},
		{Key: "content", Value: content},
	}
	if len(ch.reasoning) > 0 {
		msg = append(msg, ojson.Member{Key: "reasoning_content", Value: ojson.String(accumulated(ch.reasoning))})
	}
	if len(ch.toolOrder) > 0 {
		slots := slices.Clone(ch.toolOrder)
		slices.SortFunc(slots, func(a, b *toolSlot) int { return cmp.Compare(a.index, b.index) })
		calls := make([]ojson.Value, 0, len(slots))
		for _, sl := range slots {
			calls = append(calls, ojson.Object(
				ojson.Member{Key: "id", Value: sl.id},
				ojson.Member{Key: "type", Value: ojson.String("function")},
				ojson.Member{Key: "function", Value: ojson.Object(
					ojson.Member{Key: "name", Value: sl.name},
					ojson.Member{Key: "arguments", Value: ojson.String(accumulated(sl.args))},
				)},
			))
		}
		msg = append(msg, ojson.Member{Key: "tool_calls", Value: ojson.Array(calls...)})
	}
	return ojson.Object(
		ojson.Member{Key: "index", Value: ojson.Int(ch.index)},
		ojson.Member{Key: "message", Value: ojson.Object(msg...)},
		ojson.Member{Key: "finish_reason", Value: ch.finish},
	)
}
