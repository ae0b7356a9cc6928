package fakemodel_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// FuzzRequest feeds arbitrary bodies to every endpoint: the Server must never panic and must
// answer 200 with a JSON object or a well-formed event stream, or 400 with a JSON error.
func FuzzRequest(f *testing.F) {
	for _, sc := range scenarios {
		for i, d := range []fakemodel.Dialect{fakemodel.DialectResponses, fakemodel.DialectChat, fakemodel.DialectMessages} {
			b, err := json.Marshal(sc.body[d])
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), b)
			f.Add(uint8(i), append(b[:len(b)-1], []byte(`,"stream":true}`)...))
		}
	}
	f.Add(uint8(0), []byte(`{"model":"m","input":[{"type":"function_call_output","output":[{"type":"input_text","text":"x"}]}]}`))
	f.Add(uint8(1), []byte(`{"model":"m","messages":[{"role":"tool","content":[{"type":"text","text":"r"}]}],"n":3,"stream":true}`))
	f.Add(uint8(2), []byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"r"}]}]}]}`))
	srv := fakemodel.New()
	dialects := []string{"/v1/responses", "/v1/chat/completions", "/v1/messages"}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		resp := do(t, srv, http.MethodPost, dialects[int(which)%3], body)
		text := bodyOf(t, resp)
		switch resp.StatusCode {
		case http.StatusOK:
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				for _, ev := range parseSSE(t, text) {
					if ev.Data != "[DONE]" && !json.Valid([]byte(ev.Data)) {
						t.Fatalf("invalid event data %q", ev.Data)
					}
				}
				return
			}
			object(t, text)
		case http.StatusBadRequest:
			object(t, text)
		default:
			t.Fatalf("status %d: %s", resp.StatusCode, text)
		}
	})
}
