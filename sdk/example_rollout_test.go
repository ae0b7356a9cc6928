package sdk_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gymtrace/gymtrace/sdk"
)

func ExampleBaseURLForRun() {
	dec := json.NewDecoder(bytes.NewReader([]byte(`{"_ng_task_index": 3, "_ng_rollout_index": 1, "_ng_attempt_index": 2}`)))
	dec.UseNumber()
	var runBody map[string]any
	if err := dec.Decode(&runBody); err != nil {
		panic(err)
	}
	base, err := sdk.BaseURLForRun("http://127.0.0.1:8000/", runBody)
	if err != nil {
		panic(err)
	}
	fmt.Println(base + "/v1")
	// Output: http://127.0.0.1:8000/ng-rollout/3-1-a2/v1
}

func ExampleCorrelationFromGlobalConfig() {
	globalConfig := map[string]any{
		"observability_enabled": true,
		"token_id_capture":      map[string]any{"enabled": true},
	}
	c := sdk.CorrelationFromGlobalConfig(globalConfig, true) // this agent opted into token capture
	path, err := c.URLPathForRun("/v1/responses", []byte(`{"_ng_rollout_id": "step7.task3"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(path)
	// Output: /ng-rollout/step7.task3/training-token-capture/v1/responses
}

func ExampleParsePrefix() {
	p, ok := sdk.ParsePrefix("/ng-rollout/3-1/v1/chat/completions")
	fmt.Println(ok, p.RolloutID, p.Rest, sdk.CapturedDialect(p.Rest), sdk.ValidatePrefixID(p.RolloutID) == nil)

	p, _ = sdk.ParsePrefix("/ng-rollout/a b/v1/messages")
	status, body := sdk.InvalidRolloutIDBody(p.Rest, sdk.ValidatePrefixID(p.RolloutID))
	fmt.Println(status, string(body))
	// Output:
	// true 3-1 /v1/chat/completions chat true
	// 400 {"type":"error","error":{"type":"invalid_request_error","message":"invalid rollout id \"a b\": must match ^[A-Za-z0-9][A-Za-z0-9._-]*$ (a letter or digit, then letters, digits, dots, dashes or underscores)"}}
}
