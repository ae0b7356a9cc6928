package tokens

import (
	"bytes"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gymtrace/gymtrace/ojson"
)

// parseEntryFast reads a line whose token arrays hold only plain JSON integers (fitting int64) and
// whose log probs only plain finite JSON numbers — every line gymtrace or the reference writes —
// without building a value per number (a 32k-token call holds 33k of them). Everything else is
// read as [ParseEntry]'s general path reads it, and the result is the same; ok is false whenever
// the line needs that path (any other shape, any error, duplicate keys), which then decides.
func parseEntryFast(line []byte) (e TokenEntry, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return TokenEntry{}, false
	}
	var prompt, generation []int64
	var logProbs []float64
	var members []ojson.Member
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return TokenEntry{}, false
		}
		key := tok.String()
		switch key {
		case keyPromptTokenIDs, keyGenerationTokenIDs, keyGenerationLogProbs:
			if !readNumbers(dec, func(raw []byte) bool {
				if key == keyGenerationLogProbs {
					f, err := strconv.ParseFloat(string(raw), 64)
					logProbs = append(logProbs, f)
					return err == nil
				}
				n, err := strconv.ParseInt(string(raw), 10, 64)
				if key == keyPromptTokenIDs {
					prompt = append(prompt, n)
				} else {
					generation = append(generation, n)
				}
				return err == nil
			}) {
				return TokenEntry{}, false
			}
			members = append(members, ojson.Member{Key: key, Value: ojson.Array()})
		default:
			raw, err := dec.ReadValue()
			if err != nil {
				return TokenEntry{}, false
			}
			v, err := ojson.ParseDepth(raw, ojson.MaxDepth-1)
			if err != nil {
				return TokenEntry{}, false
			}
			members = append(members, ojson.Member{Key: key, Value: v})
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return TokenEntry{}, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return TokenEntry{}, false
	}
	e, err := EntryFromValue(ojson.Object(members...))
	if err != nil {
		return TokenEntry{}, false
	}
	e.PromptTokenIDs, e.GenerationTokenIDs, e.GenerationLogProbs = orEmpty(prompt), orEmpty(generation), orEmpty(logProbs)
	if e.Validate() != nil {
		return TokenEntry{}, false
	}
	return e, true
}

// readNumbers reads an array of JSON numbers, handing each one's text to add; false when the
// value is not such an array or add refuses an element.
func readNumbers(dec *jsontext.Decoder, add func(raw []byte) bool) bool {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return false
	}
	for dec.PeekKind() == '0' {
		raw, err := dec.ReadValue()
		if err != nil || !add(raw) {
			return false
		}
	}
	tok, err := dec.ReadToken()
	return err == nil && tok.Kind() == ']'
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
