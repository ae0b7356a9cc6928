package fakemodel_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
)

// BenchmarkStream measures one streamed answer per dialect (the demo's and the proxy
// benchmarks' upstream cost).
func BenchmarkStream(b *testing.B) {
	srv := fakemodel.New()
	for _, d := range []fakemodel.Dialect{fakemodel.DialectResponses, fakemodel.DialectChat, fakemodel.DialectMessages} {
		body := map[string]any{}
		for k, v := range scenarios[1].body[d] {
			body[k] = v
		}
		body["stream"] = true
		raw, err := json.Marshal(body)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(d), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, paths[d], bytes.NewReader(raw)))
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}

// BenchmarkEngineChat measures one Chat answer of each engine with every token member asked
// for, JSON and streamed (the upstream cost of the token-capture workloads).
func BenchmarkEngineChat(b *testing.B) {
	body := chatBody(`"logprobs":true,"top_logprobs":0,"return_token_ids":true,"return_tokens_as_token_ids":true,"return_prompt_token_ids":true`)
	for _, e := range []fakemodel.Engine{fakemodel.EngineOpenAI, fakemodel.EngineVLLM, fakemodel.EngineSGLang} {
		srv := fakemodel.New(fakemodel.WithEngine(e))
		for _, stream := range []bool{false, true} {
			raw := body
			name := string(e) + "/json"
			if stream {
				raw, name = raw[:len(raw)-1]+`,"stream":true}`, string(e)+"/stream"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					rec := httptest.NewRecorder()
					srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader([]byte(raw))))
					if rec.Code != http.StatusOK {
						b.Fatal(rec.Code, rec.Body.String())
					}
				}
			})
		}
	}
}
