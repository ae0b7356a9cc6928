package stream

import (
	"cmp"
	"maps"
	"slices"

	"github.com/gymtrace/gymtrace/internal/growbuf"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// messagesState reassembles an Anthropic Messages stream (SPEC.md §4.6). Blocks are addressed by
// their `index` (deltas of different blocks interleave); text, thinking and partial tool JSON are
// accumulated in buffers and written into their block only when the result is built.
type messagesState struct {
	message    ojson.Value // the kept message_start keys, in order
	hasMessage bool
	usage      []ojson.Member // dict.update semantics: first-seen order, last value
	blocks     map[int64]*msgBlock
	toolJSON   map[int64]*[]byte
}

type msgBlock struct {
	index       int64
	v           ojson.Value // the block object (from content_block_start, or {})
	text        []byte
	hasText     bool
	thinking    []byte
	hasThinking bool
}

// messageKeys are the message_start keys kept, in this order, when present and non-null.
var messageKeys = [...]string{"id", "type", "role", "model", "stop_reason"}

// add folds one event into the state, keeping clones, and reports whether it was skipped: an event
// that breaks the shapes §4.6 relies on (a truthy message, content_block, delta or usage that is not
// an object; an index that is not an integer; a text, thinking or partial_json that is not a
// string) is skipped whole and leaves the state untouched.
func (s *messagesState) add(ev ojson.Value) (skipped bool) {
	typ, _ := getString(ev, "type")
	switch typ {
	case "message_start":
		msg, ok := objectOrEmpty(ev, "message")
		usage, ok2 := objectOrEmpty(msg, "usage")
		if !ok || !ok2 {
			return true
		}
		kept := make([]ojson.Member, 0, len(messageKeys))
		for _, k := range messageKeys {
			if v, ok := msg.Get(k); ok && !v.IsNull() {
				kept = append(kept, ojson.Member{Key: k, Value: v.Clone()})
			}
		}
		s.message, s.hasMessage = ojson.Object(kept...), true
		s.updateUsage(usage)
	case "content_block_start":
		idx, ok := index(ev, "index", int64(len(s.blocks)))
		cb, ok2 := objectOrEmpty(ev, "content_block")
		if !ok || !ok2 {
			return true
		}
		s.setBlock(idx, &msgBlock{index: idx, v: cb.Clone()})
	case "content_block_delta":
		return !s.addDelta(ev)
	case "message_delta":
		usage, ok := objectOrEmpty(ev, "usage")
		delta, ok2 := objectOrEmpty(ev, "delta")
		if !ok || !ok2 {
			return true
		}
		s.updateUsage(usage)
		if sr, ok := getTruthy(delta, "stop_reason"); ok && s.hasMessage {
			s.message.Set("stop_reason", sr.Clone())
		}
	}
	return false
}

// addDelta applies a content_block_delta; false means it was skipped.
func (s *messagesState) addDelta(ev ojson.Value) bool {
	idx, ok := index(ev, "index", 0)
	delta, ok2 := objectOrEmpty(ev, "delta")
	if !ok || !ok2 {
		return false
	}
	dtype, _ := getString(delta, "type")
	var piece string
	switch dtype {
	case "text_delta":
		piece, ok = stringOrEmpty(delta, "text")
	case "thinking_delta":
		piece, ok = stringOrEmpty(delta, "thinking")
	case "input_json_delta":
		piece, ok = stringOrEmpty(delta, "partial_json")
	}
	if !ok {
		return false
	}
	b := s.blocks[idx]
	if b == nil {
		b = &msgBlock{index: idx, v: ojson.Object()}
		s.setBlock(idx, b)
	}
	switch dtype {
	case "text_delta":
		if !b.startAccum("text", &b.text, &b.hasText) {
			return false
		}
		b.text = growbuf.Append(b.text, piece)
	case "thinking_delta":
		if !b.startAccum("thinking", &b.thinking, &b.hasThinking) {
			return false
		}
		b.thinking = growbuf.Append(b.thinking, piece)
	case "input_json_delta":
		if s.toolJSON == nil {
			s.toolJSON = make(map[int64]*[]byte)
		}
		buf := s.toolJSON[idx]
		if buf == nil {
			buf = new([]byte)
			s.toolJSON[idx] = buf
		}
		*buf = append(*buf, piece...)
	}
	return true
}

// startAccum prepares the block for the first delta of kind key ("text" or "thinking"): its type
// defaults to key and the accumulator starts from its current string, placing the member now as
// the reference's assignment does. False when the current value is not a string.
func (b *msgBlock) startAccum(key string, buf *[]byte, started *bool) bool {
	if *started {
		return true
	}
	cur, ok := b.v.Get(key)
	var s string
	if ok {
		if s, ok = cur.AsString(); !ok {
			return false
		}
	}
	if _, ok := b.v.Get("type"); !ok {
		b.v.Set("type", ojson.String(key))
	}
	if _, ok := b.v.Get(key); !ok {
		b.v.Set(key, ojson.String(""))
	}
	*buf = append((*buf)[:0], s...)
	*started = true
	return true
}

func (s *messagesState) setBlock(idx int64, b *msgBlock) {
	if s.blocks == nil {
		s.blocks = make(map[int64]*msgBlock)
	}
	s.blocks[idx] = b
}

// updateUsage merges u into the usage with Python dict.update semantics, keeping clones.
func (s *messagesState) updateUsage(u ojson.Value) {
	for _, m := range u.Members() {
		i := slices.IndexFunc(s.usage, func(k ojson.Member) bool { return k.Key == m.Key })
		if i < 0 {
			s.usage = append(s.usage, ojson.Member{Key: m.Key})
			i = len(s.usage) - 1
		}
		s.usage[i].Value = m.Value.Clone()
	}
}

// result builds the message: the kept message keys, `type` "message" (in place when present),
// `content` (blocks in index order, tool_use inputs from their partial JSON), then `usage` when
// non-empty. False when there was neither a message_start nor a block.
func (s *messagesState) result() (ojson.Value, bool) {
	if !s.hasMessage && len(s.blocks) == 0 {
		return ojson.Value{}, false
	}
	out := ojson.Object(slices.Clone(s.message.Members())...)
	out.Set("type", ojson.String("message"))
	blocks := slices.Collect(maps.Values(s.blocks))
	slices.SortFunc(blocks, func(a, b *msgBlock) int { return cmp.Compare(a.index, b.index) })
	content := make([]ojson.Value, 0, len(blocks))
	for _, b := range blocks {
		content = append(content, s.blockValue(b))
	}
	out.Set("content", ojson.Array(content...))
	if len(s.usage) > 0 {
		out.Set("usage", ojson.Object(slices.Clone(s.usage)...))
	}
	return out, true
}

// blockValue returns a copy of the block with its accumulated strings and tool input.
func (s *messagesState) blockValue(b *msgBlock) ojson.Value {
	v := ojson.Object(slices.Clone(b.v.Members())...)
	if b.hasText {
		v.Set("text", ojson.String(accumulated(b.text)))
	}
	if b.hasThinking {
		v.Set("thinking", ojson.String(accumulated(b.thinking)))
	}
	if typ, _ := getString(v, "type"); typ == "tool_use" {
		if buf := s.toolJSON[b.index]; buf != nil {
			if in, ok := v.Get("input"); !ok || !python.Truthy(in) {
				v.Set("input", toolInput(*buf))
			}
		}
	}
	return v
}

// toolInput parses a tool_use block's partial JSON (SPEC §4.6): "" gives {}, text that does not
// parse {"_raw": text}; strict JSON keeps its number text (D9), text only Python's json.loads
// accepts (NaN, huge integers, duplicate keys) is read as it reads it.
func toolInput(raw []byte) ojson.Value {
	if len(raw) == 0 {
		return ojson.Object()
	}
	if v, err := ojson.Parse(raw); err == nil {
		return v
	}
	if v, err := python.Loads(raw); err == nil {
		return v
	}
	return ojson.Object(ojson.Member{Key: "_raw", Value: ojson.String(string(raw))})
}

// objectOrEmpty returns `obj.get(key) or {}`, false when that value is truthy but not an object.
func objectOrEmpty(obj ojson.Value, key string) (ojson.Value, bool) {
	v, ok := getTruthy(obj, key)
	if !ok {
		return ojson.Object(), true
	}
	if v.Kind() != ojson.KindObject {
		return ojson.Value{}, false
	}
	return v, true
}

// stringOrEmpty returns `obj.get(key, "")` and false when the member is present but not a string.
func stringOrEmpty(obj ojson.Value, key string) (string, bool) {
	v, ok := obj.Get(key)
	if !ok {
		return "", true
	}
	return v.AsString()
}
