package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/proxy"
)

// BenchmarkProxyWorkloads measures one captured call of each `gymtrace bench` workload (small
// JSON, 20 KiB JSON, 200-event SSE without the pauses) through the capture proxy (proxy.New)
// over loopback HTTP, as `gymtrace proxy` serves it: forwarding, capture, span, record and durable
// append (issue 6). Its allocations per call are the proxy's plus the client's and the upstream's,
// which do not change with the proxy. MB/s is over the response body.
func BenchmarkProxyWorkloads(b *testing.B) {
	for _, w := range Workloads() {
		b.Run(w.Name, func(b *testing.B) {
			unpaced := *w
			unpaced.Gap = 0
			up := httptest.NewServer(workloadHandler(&unpaced))
			h, err := proxy.New(up.URL, proxy.WithCaptureDir(b.TempDir()), proxy.WithModelServerName("policy_model"))
			require.NoError(b, err)
			srv := httptest.NewServer(h)
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			b.Cleanup(func() {
				client.CloseIdleConnections()
				srv.Close()
				require.NoError(b, h.Shutdown(context.Background()))
				up.Close()
			})
			url := srv.URL + "/ng-rollout/bench-0/v1/chat/completions"
			want := w.ResponseBytes()
			b.ReportAllocs()
			b.SetBytes(int64(want))
			for b.Loop() {
				resp, err := client.Post(url, "application/json", bytes.NewReader(w.Request))
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if err != nil || n != int64(want) || resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d, %d of %d body bytes, err %v", resp.StatusCode, n, want, err)
				}
			}
		})
	}
}
