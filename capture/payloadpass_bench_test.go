package capture

import "testing"

// BenchmarkHandlerPayloadPass is the capture proxy's payload work per non-stream call: split the
// request and response bodies for the record and make the span attributes from them, reading each
// body's facts in the pass that splits it.
func BenchmarkHandlerPayloadPass(b *testing.B) {
	for _, c := range perfCases() {
		if c.sse != nil {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.request) + len(c.response)))
			for b.Loop() {
				var f PayloadFacts
				e := Exchange{ModelCallID: "863410a8d52e4be6a31efc5c6e9d4629", Dialect: c.dialect, LatencyMS: 1}
				e.Request, e.RequestRaw = f.RequestPayload(c.request)
				e.Response, e.ResponseRaw = f.ResponsePayload(c.response)
				if len(ExchangeAttributes(&e, WithPayloadFacts(&f))) < 10 {
					b.Fatal("attributes missing")
				}
			}
		})
	}
}
