package tokens

import (
	"encoding/json"
	"testing"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
)

// FuzzExtract: extraction and entry building never panic on any JSON body; an entry built from a
// body has its ids, validates, and its canonical line is one line.
func FuzzExtract(f *testing.F) {
	for _, c := range testvectors.Load(f, "token_capture.json") {
		var in struct {
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(c.Input, &in) == nil && in.Payload != nil {
			f.Add([]byte(in.Payload))
		}
	}
	for _, b := range []string{skResponses, skVLLM, skChat, skMoE, skSecond, `{"output":5}`, `{"choices":[null,"x"]}`} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		payload, err := python.Loads(body)
		if err != nil {
			return
		}
		_, _ = ExtractTokenFields(payload)
		if items, err := ResponseToOutputItems(payload); err == nil {
			_, _, _ = StripTokenFields(items)
		}
		e, err := EntryFromResponse(payload, "r0", "c1", "", pinnedTime)
		if err != nil {
			return
		}
		if e.RolloutID != "r0" || e.ModelCallID != "c1" || e.CreatedAt != pinnedSeconds {
			t.Fatalf("identity not kept: %+v", e)
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("built an invalid entry: %v", err)
		}
		line, err := e.Line()
		if err != nil {
			return // an integer beyond 64 bits in an output item: the reference cannot write it either
		}
		for _, c := range line[:len(line)-1] {
			if c == '\n' {
				t.Fatalf("line %q holds a newline", line)
			}
		}
	})
}
