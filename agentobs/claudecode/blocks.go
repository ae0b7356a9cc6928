package claudecode

import (
	"fmt"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
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
		x.gap(GapUnsupportedAssistantContent, inv.id, ptr(python.TypeName(content)))
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
		case isString && (blockType == "text" || blockType == "thinking"):
			text, ok := nonEmptyString(block.Get(blockType))
			if !ok {
				continue
			}
			id, ok := itemID(e, message, blockType, index)
			switch {
			case !ok && blockType == "text":
				x.gap(GapAssistantItemIDMissing, inv.id, nil)
			case !ok:
				x.gap(GapReasoningItemIDMissing, inv.id, nil)
			case blockType == "text":
				inv.conversation = append(inv.conversation, outputMessageItem(id, text))
			default:
				var signature *string
				if sig, ok := block.Get("signature"); ok {
					if s, ok := sig.AsString(); ok {
						signature = &s
					}
				}
				inv.conversation = append(inv.conversation, reasoningItem(id, text, signature))
			}
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
			inv.conversation = append(inv.conversation, functionCallItem(toolID, name, python.Dumps(input)))
			key := toolKey{inv.id, toolID}
			x.starts[key] = append(x.starts[key], toolStart{at: timestampIn(e, x.loc), name: name})
		default:
			x.gap(GapUnsupportedAssistantContent, inv.id, typeDetail(blockType, isString))
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
			x.gap(GapUnsupportedUserContent, inv.id, ptr(python.TypeName(content)))
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
			x.gap(GapUnsupportedUserContent, inv.id, typeDetail(blockType, isString))
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

// typeDetail is the gap detail of an unsupported block: its type when that is a string, else null.
func typeDetail(blockType string, isString bool) *string {
	if !isString {
		return nil
	}
	return ptr(blockType)
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
