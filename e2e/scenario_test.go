package e2e

import (
	"fmt"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clients are the official SDK clients of one scenario run, pointed at one base URL.
type clients struct {
	openai    openai.Client
	anthropic anthropic.Client
	// called runs after every model call: through the proxy it checks that the call left
	// exactly one new record; directly it does nothing.
	called func(t *testing.T)
}

// newClients builds clients for base (a server URL, possibly with a rollout prefix): openai-go
// gets base + "/v1/", anthropic-sdk-go base + "/" (it appends v1/messages itself). Retries are
// off so every call is exactly one HTTP exchange.
func newClients(t *testing.T, base string, rec *recorder, called func(t *testing.T)) *clients {
	t.Helper()
	hc := httpClient(t, rec)
	if called == nil {
		called = func(*testing.T) {}
	}
	return &clients{
		openai: openai.NewClient(
			option.WithBaseURL(base+"/v1/"),
			option.WithAPIKey("sk-e2e-test"),
			option.WithHTTPClient(hc),
			option.WithMaxRetries(0),
		),
		anthropic: anthropic.NewClient(
			aoption.WithBaseURL(base+"/"),
			aoption.WithAPIKey("sk-ant-e2e-test"),
			aoption.WithHTTPClient(hc),
			aoption.WithMaxRetries(0),
		),
		called: called,
	}
}

// scenario is a sequence of model calls made with the official clients; it returns what the
// client saw of each call, in order.
type scenario struct {
	name string
	run  func(t *testing.T, c *clients) []callResult
}

// runScenarios runs each scenario directly against a fake upstream, then (unless -direct-only)
// through `gymtrace proxy` under its own rollout id, and checks: the same results both ways,
// one record per call, and each record's fields (checkRecord).
func runScenarios(t *testing.T, scenarios []scenario) {
	upstream := startUpstream(t)
	var p *proxyProc
	if !*directOnly {
		p = startProxy(t, upstream.URL)
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			rec := &recorder{}
			direct := sc.run(t, newClients(t, upstream.URL, rec, nil))
			require.NotEmpty(t, direct)
			// The record oracle, checked on the upstream's own JSON answers: deriving the
			// ModelCallRecord fields from them by the SPEC's rules gives what the client saw.
			require.Len(t, rec.exchanges, len(direct), "one HTTP exchange per call")
			for i, ex := range rec.exchanges {
				if ex.sse {
					continue
				}
				req, ok := decodeJSON(t, string(ex.request)).(map[string]any)
				require.True(t, ok)
				resp, ok := decodeJSON(t, string(ex.response)).(map[string]any)
				require.True(t, ok)
				assert.Equal(t, direct[i], deriveResult(t, direct[i].Dialect, false, req, resp), "call %d", i)
			}
			if p == nil {
				return
			}
			id := rolloutID(t)
			calls := 0
			viaProxy := sc.run(t, newClients(t, rolloutBaseURL(t, p.URL, id), nil, func(t *testing.T) {
				t.Helper()
				calls++
				require.Equal(t, calls, p.lineCount(t, id),
					"call %d: exactly one durable record per call, written before the client saw the end", calls)
			}))
			assert.Equal(t, direct, viaProxy, "the client gets the same result through the proxy as directly")

			records := readRecords(t, p.capturePath(id))
			require.Len(t, records, len(viaProxy))
			seen := map[any]bool{}
			for i, rec := range records {
				t.Run(fmt.Sprintf("record%d", i), func(t *testing.T) {
					checkRecord(t, rec, viaProxy[i], id)
				})
				assert.False(t, seen[rec.Fields["model_call_id"]], "model_call_id is unique")
				seen[rec.Fields["model_call_id"]] = true
			}
			t.Run("gymtrace_calls", func(t *testing.T) {
				checkCallsCommand(t, p, id, viaProxy, records)
			})
		})
	}
}
