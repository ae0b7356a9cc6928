package agentobs

import (
	"errors"
	"slices"
	"strings"

	"github.com/gymtrace/gymtrace/ojson"
)

// Gym validates every conversation item of an invocation against its Responses input-item union
// and dumps it in the field order of the member that won (SPEC §5.6 "AgentInvocation"). gymtrace
// normalizes the members Gym's producers and the capture merge emit — the easy input message, the
// message, the output message, function_call, function_call_output, reasoning, mcp_call, their
// training variants (token ids first, routed_experts added) and the mcp_list_tools catch-all of
// an untyped item that fits no message shape — and passes the union's other SDK item types
// through unchanged. An item that fits no member is an error (normalizeConversations).

// tokenKeys are the training token fields of an item (all three, or none).
var tokenKeys = []string{"prompt_token_ids", "generation_token_ids", "generation_log_probs"}

// unionTypes are the item types of the union that gymtrace passes through unchanged.
var unionTypes = []string{"mcp_list_tools", "mcp_approval_request", "file_search_call", "web_search_call",
	"computer_call", "image_generation_call", "code_interpreter_call", "local_shell_call",
	"custom_tool_call", "computer_call_output", "custom_tool_call_output", "local_shell_call_output",
	"mcp_approval_response"}

// errConversationItem is the error of a conversation item that fits no member of the union.
var errConversationItem = errors.New("conversation item fits no Responses input item type")

// normalizeConversations returns trajectory v with the conversation items of its invocations
// normalized, and an error naming each item that fits no member of the union.
func normalizeConversations(v ojson.Value) (ojson.Value, error) {
	var errs []error
	out := mapMembers(v, func(key string, invs ojson.Value) ojson.Value {
		if key != "invocations" || invs.Kind() != ojson.KindArray {
			return invs
		}
		list := make([]ojson.Value, len(invs.Elems()))
		for i, inv := range invs.Elems() {
			list[i] = mapMembers(inv, func(key string, conv ojson.Value) ojson.Value {
				if key != "conversation" || conv.Kind() != ojson.KindArray {
					return conv
				}
				items := make([]ojson.Value, len(conv.Elems()))
				for j, item := range conv.Elems() {
					n, err := normalizeItem(item)
					if err != nil {
						errs = append(errs, fieldError(indexPath(indexPath("invocations", i)+".conversation", j), err))
					}
					items[j] = n
				}
				return ojson.Array(items...)
			})
		}
		return ojson.Array(list...)
	})
	return out, errors.Join(errs...)
}

// normalizeItem returns item's dump, or an error when it fits no member of the union.
func normalizeItem(item ojson.Value) (ojson.Value, error) {
	if item.Kind() != ojson.KindObject {
		return item, nil
	}
	var missing []string
	for _, k := range tokenKeys {
		if _, ok := item.Get(k); !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 && len(missing) < len(tokenKeys) {
		slices.Sort(missing)
		return item, errors.New("Token metadata must include all required fields; missing: " + strings.Join(missing, ", "))
	}
	base, err := normalizeBase(item)
	if err != nil || len(missing) > 0 {
		return base, err
	}
	ms := make([]ojson.Member, 0, len(base.Members())+4)
	for _, k := range tokenKeys {
		v, _ := item.Get(k)
		ms = append(ms, ojson.Member{Key: k, Value: v})
	}
	re, _ := item.Get("routed_experts")
	ms = append(ms, ojson.Member{Key: "routed_experts", Value: re})
	return ojson.Object(append(ms, base.Members()...)...), nil
}

func normalizeBase(item ojson.Value) (ojson.Value, error) {
	typ, hasType := item.Get("type")
	t, _ := typ.AsString()
	switch {
	case !hasType || t == "message":
		if m, ok := message(item); ok {
			return m, nil
		}
		if !hasType {
			return pickKeys(item, true, "id", "server_label", "tools", "type", "error").setDefault("tools", ojson.Array()).
				set("type", ojson.String("mcp_list_tools")).v, nil
		}
	case t == "function_call":
		if allStrings(item, "arguments", "call_id", "name") {
			return pickKeys(item, false, "arguments", "call_id", "name", "type", "id", "status").v, nil
		}
	case t == "function_call_output":
		if allStrings(item, "call_id") {
			if out, ok := item.Get("output"); ok {
				if _, isStr := out.AsString(); isStr {
					return pickKeys(item, false, "call_id", "output", "type", "id", "status").v, nil
				}
				if parts, ok := inputParts(out, true); ok {
					return pickKeys(item, false, "call_id", "output", "type", "id", "status").set("output", parts).v, nil
				}
			}
		}
	case t == "reasoning":
		summary, ok := item.Get("summary")
		if allStrings(item, "id") && ok && summary.Kind() == ojson.KindArray {
			parts := make([]ojson.Value, len(summary.Elems()))
			for i, s := range summary.Elems() {
				parts[i] = pickKeys(s, true, "text", "type").v
			}
			return pickKeys(item, false, "id", "summary", "type", "encrypted_content", "content").set("summary", ojson.Array(parts...)).v, nil
		}
	case t == "mcp_call":
		return pickKeys(item, true, "id", "arguments", "name", "server_label", "type", "approval_request_id", "error", "output", "status").v, nil
	case slices.Contains(unionTypes, t):
		return item, nil
	}
	return item, errConversationItem
}

// message normalizes the three message members: the output message (an assistant message with an
// id and output parts), the message (list content and a status), the easy input message.
func message(item ojson.Value) (ojson.Value, bool) {
	role := str(item, "role")
	content, _ := item.Get("content")
	_, hasStatus := item.Get("status")
	if role == "assistant" && allStrings(item, "id") {
		if parts, ok := outputParts(content); ok {
			return pickKeys(item, false, "id", "content", "role", "status", "type").set("content", parts).
				setDefault("status", ojson.String("completed")).set("type", ojson.String("message")).v, true
		}
	}
	if _, isStr := content.AsString(); isStr && slices.Contains([]string{"user", "assistant", "system", "developer"}, role) {
		return pickKeys(item, false, "content", "role", "type").set("type", ojson.String("message")).v, true
	}
	parts, ok := inputParts(content, false)
	if !ok {
		return item, false
	}
	if hasStatus && slices.Contains([]string{"user", "system", "developer"}, role) {
		return pickKeys(item, false, "content", "role", "status", "type").set("content", parts).set("type", ojson.String("message")).v, true
	}
	if slices.Contains([]string{"user", "assistant", "system", "developer"}, role) {
		return pickKeys(item, false, "content", "role", "type").set("content", parts).set("type", ojson.String("message")).v, true
	}
	return item, false
}

// inputParts normalizes a list of input parts (TypedDicts: only known keys, in declaration order).
func inputParts(v ojson.Value, toolOutput bool) (ojson.Value, bool) {
	if v.Kind() != ojson.KindArray {
		return v, false
	}
	image := []string{"detail", "type", "file_id", "image_url"}
	if toolOutput {
		image = []string{"type", "detail", "file_id", "image_url"}
	}
	out := make([]ojson.Value, len(v.Elems()))
	for i, p := range v.Elems() {
		var keys []string
		switch str(p, "type") {
		case "input_text":
			if !allStrings(p, "text") {
				return v, false
			}
			keys = []string{"text", "type"}
		case "input_image":
			keys = image
		case "input_file":
			keys = []string{"type", "file_data", "file_id", "file_url", "filename"}
		case "input_video":
			if toolOutput {
				return v, false
			}
			keys = []string{"type", "video_url", "video"}
		default:
			return v, false
		}
		out[i] = pickPresent(p, keys...)
	}
	return ojson.Array(out...), true
}

// outputParts normalizes output message content: output_text and refusal parts.
func outputParts(v ojson.Value) (ojson.Value, bool) {
	if v.Kind() != ojson.KindArray {
		return v, false
	}
	out := make([]ojson.Value, len(v.Elems()))
	for i, p := range v.Elems() {
		switch str(p, "type") {
		case "output_text":
			if !allStrings(p, "text") {
				return v, false
			}
			out[i] = pickKeys(p, false, "annotations", "text", "type", "logprobs").setDefault("annotations", ojson.Array()).v
		case "refusal":
			out[i] = pickKeys(p, false, "refusal", "type").v
		default:
			return v, false
		}
	}
	return ojson.Array(out...), true
}

func allStrings(v ojson.Value, keys ...string) bool {
	for _, k := range keys {
		if m, ok := v.Get(k); !ok || m.Kind() != ojson.KindString {
			return false
		}
	}
	return true
}

// picked is an object being normalized.
type picked struct{ v ojson.Value }

// pickKeys returns the keys of v in order (null when absent), followed by v's other members when
// extras.
func pickKeys(v ojson.Value, extras bool, keys ...string) picked {
	ms := make([]ojson.Member, 0, len(keys))
	for _, k := range keys {
		m, _ := v.Get(k)
		ms = append(ms, ojson.Member{Key: k, Value: m})
	}
	if extras {
		for _, m := range v.Members() {
			if !slices.Contains(keys, m.Key) {
				ms = append(ms, m)
			}
		}
	}
	return picked{ojson.Object(ms...)}
}

// pickPresent returns the keys of v that are present, in the order of keys.
func pickPresent(v ojson.Value, keys ...string) ojson.Value {
	var ms []ojson.Member
	for _, k := range keys {
		if m, ok := v.Get(k); ok {
			ms = append(ms, ojson.Member{Key: k, Value: m})
		}
	}
	return ojson.Object(ms...)
}

func (p picked) set(k string, v ojson.Value) picked { p.v.Set(k, v); return p }

func (p picked) setDefault(k string, v ojson.Value) picked {
	if m, _ := p.v.Get(k); m.IsNull() {
		p.v.Set(k, v)
	}
	return p
}
