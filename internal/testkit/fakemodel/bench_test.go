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
