package capturegen

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/gymtrace/gymtrace/internal/testkit/fakemodel"
	"github.com/gymtrace/gymtrace/proxy"
	"github.com/gymtrace/gymtrace/rollout"
)

// callHeader carries the index of a call so the fault function can find its Fault.
const callHeader = "X-Capturegen-Call"

// ModelServerName is the model server name the captures record (model_ref.name).
const ModelServerName = "policy_model"

// Call is one model call to send.
type Call struct {
	RolloutID string            // the /ng-rollout/<id>/ prefix; must pass rollout.ValidateID
	Dialect   fakemodel.Dialect // which endpoint
	Stream    bool              // ask for a server-sent event stream
	Prompt    string            // the user message; default "What is 6 times 7?"
	Model     string            // the request's model; default "policy-large"
	Tools     bool              // offer a calculator tool (the answer is then a tool call)
	Fault     fakemodel.Fault   // how the fake model answers (status, cut stream, ...)
	Extra     map[string]any    // more request members (e.g. "max_output_tokens"), set last
}

// Generate sends calls, in order, through a capture handler writing to dir (created if missing) and
// returns the HTTP status of each answer (0 when the connection broke). A call whose answer the
// client cannot read to its end is not an error: such failures are what tests capture. Errors: an
// invalid Call, the servers failing to start, or ctx ending.
func Generate(ctx context.Context, dir string, calls []Call) ([]int, error) {
	model := fakemodel.New(fakemodel.WithFault(func(c fakemodel.Call) fakemodel.Fault {
		i, err := strconv.Atoi(c.Header.Get(callHeader))
		if err != nil || i < 0 || i >= len(calls) {
			return fakemodel.Fault{}
		}
		return calls[i].Fault
	}))
	h, err := proxy.CaptureHandler(model, proxy.WithCaptureDir(dir), proxy.WithModelServerName(ModelServerName),
		proxy.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, fmt.Errorf("capturegen: %w", err)
	}
	srv := httptest.NewServer(h)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}
	defer func() {
		client.CloseIdleConnections()
		srv.Close()
		_ = h.Shutdown(context.WithoutCancel(ctx))
	}()
	statuses := make([]int, len(calls))
	for i, c := range calls {
		body, path, err := requestBody(c)
		if err != nil {
			return statuses, fmt.Errorf("capturegen: call %d: %w", i, err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/ng-rollout/"+c.RolloutID+path, bytes.NewReader(body))
		if err != nil {
			return statuses, fmt.Errorf("capturegen: call %d: %w", i, err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(callHeader, strconv.Itoa(i))
		if c.Dialect == fakemodel.DialectMessages {
			req.Header.Set("anthropic-version", "2023-06-01")
		}
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return statuses, fmt.Errorf("capturegen: call %d: %w", i, ctx.Err())
			}
			continue // the connection broke (a fault): the capture still has the record
		}
		statuses[i] = resp.StatusCode
		_, _ = io.Copy(io.Discard, resp.Body) // a broken stream ends with an error here: that is the point
		_ = resp.Body.Close()
	}
	return statuses, nil
}

// requestBody returns the JSON request of c and its endpoint path.
func requestBody(c Call) ([]byte, string, error) {
	if err := rollout.ValidateID(c.RolloutID); err != nil {
		return nil, "", err
	}
	prompt, model := cmp.Or(c.Prompt, "What is 6 times 7?"), cmp.Or(c.Model, "policy-large")
	var body map[string]any
	var path string
	switch c.Dialect {
	case fakemodel.DialectResponses:
		path = "/v1/responses"
		body = map[string]any{"model": model, "input": prompt, "stream": c.Stream}
		if c.Tools {
			body["tools"] = []any{map[string]any{"type": "function", "name": "calculator", "parameters": calcParams}}
		}
	case fakemodel.DialectChat:
		path = "/v1/chat/completions"
		body = map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": prompt}}, "stream": c.Stream}
		if c.Stream {
			body["stream_options"] = map[string]any{"include_usage": true}
		}
		if c.Tools {
			body["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "calculator", "parameters": calcParams}}}
		}
	case fakemodel.DialectMessages:
		path = "/v1/messages"
		body = map[string]any{"model": model, "max_tokens": 512, "messages": []any{map[string]any{"role": "user", "content": prompt}}, "stream": c.Stream}
		if c.Tools {
			body["tools"] = []any{map[string]any{"name": "calculator", "input_schema": calcParams}}
		}
	default:
		return nil, "", errors.New("unknown dialect " + strconv.Quote(string(c.Dialect)))
	}
	for k, v := range c.Extra {
		body[k] = v
	}
	b, err := json.Marshal(body)
	return b, path, err
}

// calcParams is the calculator tool's parameter schema.
var calcParams = map[string]any{
	"type":       "object",
	"properties": map[string]any{"expression": map[string]any{"type": "string"}},
	"required":   []any{"expression"},
}
