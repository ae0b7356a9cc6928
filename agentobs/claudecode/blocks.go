package claudecode

import (
	"fmt"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/internal/ojson"
	"github.com/gymtrace/gymtrace/internal/pyrepr"
)

// itemID is the reference's item id: "<uuid>:<kind>:<index>" when the event has a non-empty
// string uuid, else "<message.id>:<kind>:<index>", else none.
func itemID(e event, message ojson.Value, kind string, index int) (string, bool) {
	if uuid, ok := nonEmptyString(e.get("uuid")); ok {
		return fmt.Sprintf("%s:%s:%d", uuid, kind, index), true
	}
	if mid, ok := nonEmptyString(message.Get("id")); ok {
		return fmt.Sprintf("%s:%s:%d", mid, kind, index), true
	}
	return "", false
}

// assistantBlocks handles an assistant message's content blocks (SPEC §6.4 role assistant).
func (x *extractor) assistantBlocks(inv *invocation, e event, message, content ojson.Value, hasContent bool) {
	var blocks []ojson.Value
	switch {
	case hasContent && content.Kind() == ojson.KindArray:
		blocks = content.Elems()
	case hasContent && content.Kind() == ojson.KindString:
		blocks = []ojson.Value{ojson.Object(ojson.Member{Key: "type", Value: ojson.String("text")}, ojson.Member{Key: "text", Value: content})}
	default:
		x.gap(GapUnsupportedAssistantContent, inv.id, ptr(pyrepr.TypeName(content)))
	}
	for index, block := range blocks {
		if block.Kind() != ojson.KindObject {
			x.gap(GapInvalidAssistantContent, inv.id, nil)
			continue
		}
		typ, hasType := block.Get("type")
		blockType, isString := typ.AsString()
		if !hasType || !isString {
			blockType = ""
		}
		switch {
		case isString && blockType == "text":
			text, ok := nonEmptyString(block.Get("text"))
			if !ok {
				continue
			}
			id, ok := itemID(e, message, "text", index)
			if !ok {
				x.gap(GapAssistantItemIDMissing, inv.id, nil)
				continue
			}
			inv.conversation = append(inv.conversation, outputMessageItem(id, text))
		case isString && blockType == "thinking":
			thinking, ok := nonEmptyString(block.Get("thinking"))
			if !ok {
				continue
			}
			id, ok := itemID(e, message, "thinking", index)
			if !ok {
				x.gap(GapReasoningItemIDMissing, inv.id, nil)
				continue
			}
			var signature *string
			if sig, ok := block.Get("signature"); ok {
				if s, ok := sig.AsString(); ok {
					signature = &s
				}
			}
			inv.conversation = append(inv.conversation, reasoningItem(id, thinking, signature))
		case isString && blockType == "tool_use":
			toolID, ok := nonEmptyString(block.Get("id"))
			if !ok {
				x.gap(GapToolCallIDMissing, inv.id, nil)
				continue
			}
			name := ""
			if n, ok := block.Get("name"); ok {
				name, _ = n.AsString()
			}
			input, ok := block.Get("input")
			if !ok {
				input = ojson.Object()
			}
			inv.conversation = append(inv.conversation, functionCallItem(toolID, name, pyDumps(input)))
			key := toolKey{inv.id, toolID}
			x.starts[key] = append(x.starts[key], toolStart{at: timestampIn(e, x.loc), name: name})
		default:
			var detail *string
			if isString {
				detail = ptr(blockType)
			}
			x.gap(GapUnsupportedAssistantContent, inv.id, detail)
		}
	}
}

// userBlocks handles a user/system/developer message (SPEC §6.4), including the subagent link.
func (x *extractor) userBlocks(inv *invocation, e event, role string, content ojson.Value, hasContent bool) {
	if s, ok := content.AsString(); hasContent && ok {
		if s != "" {
			inv.conversation = append(inv.conversation, inputMessageItem(role, s))
		}
		return
	}
	if !hasContent || content.Kind() != ojson.KindArray {
		if hasContent && !content.IsNull() {
			x.gap(GapUnsupportedUserContent, inv.id, ptr(pyrepr.TypeName(content)))
		}
		return
	}

	resultMeta, _ := e.get("toolUseResult")
	var toolResults []ojson.Value
	for _, block := range content.Elems() {
		if block.Kind() != ojson.KindObject {
			x.gap(GapInvalidUserContent, inv.id, nil)
			continue
		}
		typ, _ := block.Get("type")
		blockType, isString := typ.AsString()
		switch {
		case isString && blockType == "tool_result":
			toolResults = append(toolResults, block)
			toolID, ok := nonEmptyString(block.Get("tool_use_id"))
			if !ok {
				x.gap(GapToolResultIDMissing, inv.id, nil)
				continue
			}
			status := toolResultStatus(block, resultMeta)
			inv.conversation = append(inv.conversation,
				functionCallOutputItem(toolID, textOf(block.Get("content")), status == agentobs.ToolCallStatusCompleted))
			key := toolKey{inv.id, toolID}
			x.finishes[key] = append(x.finishes[key], toolFinish{at: timestampIn(e, x.loc), status: status})
		case isString && blockType == "text":
			if text, ok := block.Get("text"); ok && text.Kind() == ojson.KindString {
				s, _ := text.AsString()
				inv.conversation = append(inv.conversation, inputMessageItem(role, s))
			} else {
				x.gap(GapUnsupportedUserContent, inv.id, ptr("text"))
			}
		default:
			var detail *string
			if isString {
				detail = ptr(blockType)
			}
			x.gap(GapUnsupportedUserContent, inv.id, detail)
		}
	}

	child, ok := nonEmptyString(resultMeta.Get("agentId"))
	if !ok {
		return
	}
	var toolID string
	linkable := len(toolResults) == 1
	if linkable {
		v, _ := toolResults[0].Get("tool_use_id")
		toolID, linkable = v.AsString()
	}
	if !linkable {
		x.gap(GapAmbiguousSubagentRelation, inv.id, nil)
		return
	}
	link := parentLink{invocation: inv.id, toolCallID: toolID, status: toolResultStatus(toolResults[0], resultMeta), ordinal: e.ordinal}
	if existing, ok := x.parents[child]; ok && (existing.invocation != link.invocation || existing.toolCallID != link.toolCallID) {
		delete(x.parents, child)
		x.ambiguous[child] = true
		x.gaps = append(x.gaps, newGap(GapConflictingSubagentParent, ptr(child), nil))
		return
	}
	if x.ambiguous[child] {
		return
	}
	if x.wouldCycle(child, inv.id) {
		x.gap(GapCyclicSubagentParent, child, ptr(inv.id))
		return
	}
	if _, ok := x.parents[child]; !ok {
		x.parents[child] = link
		x.parentOrder = append(x.parentOrder, child)
	}
}

// toolResultStatus is the reference's _status: is_error true → failed; toolUseResult.interrupted
// true → incomplete; toolUseResult.status one of completed/failed/timeout/cancelled/incomplete →
// that; otherwise completed (a tool_result block is itself a terminal observation).
func toolResultStatus(block, resultMeta ojson.Value) agentobs.ToolCallStatus {
	if isTrue(block.Get("is_error")) {
		return agentobs.ToolCallStatusFailed
	}
	if resultMeta.Kind() == ojson.KindObject {
		if isTrue(resultMeta.Get("interrupted")) {
			return agentobs.ToolCallStatusIncomplete
		}
		if v, ok := resultMeta.Get("status"); ok {
			if s, ok := v.AsString(); ok {
				switch st := agentobs.ToolCallStatus(s); st {
				case agentobs.ToolCallStatusCompleted, agentobs.ToolCallStatusFailed, agentobs.ToolCallStatusTimeout,
					agentobs.ToolCallStatusCancelled, agentobs.ToolCallStatusIncomplete:
					return st
				}
			}
		}
	}
	return agentobs.ToolCallStatusCompleted
}

// wouldCycle reports whether linking child under parent would close a cycle among the links kept
// so far (child == parent included).
func (x *extractor) wouldCycle(child, parent string) bool {
	seen := map[string]bool{child: true}
	current := parent
	for {
		link, ok := x.parents[current]
		if !ok {
			break
		}
		if seen[current] {
			return true
		}
		seen[current] = true
		current = link.invocation
	}
	return seen[current]
}
