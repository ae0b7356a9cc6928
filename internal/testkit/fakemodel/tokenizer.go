package fakemodel

import (
	"hash/fnv"
	"unicode"
	"unicode/utf8"
)

// The fake tokenizer. It is deterministic and lossless, and has the special tokens of a
// ChatML chat template (Qwen2.5/Qwen3's ids):
//
//   - Ordinary text is cut into pieces: a run of letters and digits with at most one leading
//     space, at most maxPieceBytes bytes long (a longer run is cut on rune boundaries), or any
//     other single rune (punctuation, a newline, a lone space). Concatenating the pieces gives
//     the text back byte for byte.
//   - A piece's id is firstPieceID + FNV-1a-64(piece) mod (vocabSize − firstPieceID), so equal
//     pieces always get equal ids (two different pieces may share one, as in any real
//     vocabulary).
//   - The special tokens are never produced from text: the chat template (template.go) places
//     them. Their text (in log-prob entries and token strings) is their literal name.
const (
	vocabSize     = 151643 // ordinary pieces have ids in [firstPieceID, vocabSize)
	firstPieceID  = 256
	maxPieceBytes = 8

	tokEndOfText   = 151643 // <|endoftext|>: the BOS token that add_special_tokens prepends
	tokIMStart     = 151644 // <|im_start|>: opens a turn, followed by the role and "\n"
	tokIMEnd       = 151645 // <|im_end|>: ends a turn; the end-of-turn token a generation ends with
	tokToolCall    = 151657 // <tool_call>
	tokToolCallEnd = 151658 // </tool_call>
	tokThink       = 151667 // <think>
	tokThinkEnd    = 151668 // </think>
)

// specialText is the literal text of each special token.
var specialText = map[int]string{
	tokEndOfText:   "<|endoftext|>",
	tokIMStart:     "<|im_start|>",
	tokIMEnd:       "<|im_end|>",
	tokToolCall:    "<tool_call>",
	tokToolCallEnd: "</tool_call>",
	tokThink:       "<think>",
	tokThinkEnd:    "</think>",
}

// token is one token: its id and the text it stands for.
type token struct {
	id   int
	text string
}

// special returns the special token id.
func special(id int) token { return token{id, specialText[id]} }

// pieceID is the id of an ordinary piece.
func pieceID(p string) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(p))
	return firstPieceID + int(h.Sum64()%uint64(vocabSize-firstPieceID))
}

// tokenize cuts s into ordinary pieces (see the scheme above).
func tokenize(s string) []token {
	var out []token
	for len(s) > 0 {
		n := pieceLen(s)
		out = append(out, token{pieceID(s[:n]), s[:n]})
		s = s[n:]
	}
	return out
}

// pieceLen is the byte length of the first piece of a non-empty s.
func pieceLen(s string) int {
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	i := 0
	if s[0] == ' ' {
		i = 1
	}
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !word(r) || i+size > maxPieceBytes {
			break
		}
		i += size
	}
	if i == 0 || (i == 1 && s[0] == ' ') {
		_, size := utf8.DecodeRuneInString(s)
		return size
	}
	return i
}
