package rollout_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gymtrace/gymtrace/rollout"
)

func ExampleBaseURLForRun() {
	runBody := []byte(`{"_ng_task_index": 3, "_ng_rollout_index": 1, "_ng_attempt_index": 2}`)
	base, err := rollout.BaseURLForRun("http://127.0.0.1:8000/", runBody)
	if err != nil {
		panic(err)
	}
	fmt.Println(base + "/v1")
	// Output: http://127.0.0.1:8000/ng-rollout/3-1-a2/v1
}

func ExampleIDFromRunBody() {
	for _, body := range []string{
		`{"_ng_task_index": 3.0, "_ng_rollout_index": true}`,
		`{"_ng_rollout_id": "s7-3-2", "_ng_attempt_index": "1"}`,
		`{"_ng_task_index": 3}`,
		`{"_ng_rollout_id": "has/slash"}`,
	} {
		id, ok, err := rollout.IDFromRunBody([]byte(body))
		fmt.Printf("%q %v %v\n", id, ok, err)
	}
	// Output:
	// "3.0-True" true <nil>
	// "s7-3-2-a1" true <nil>
	// "" false <nil>
	// "" false _ng_rollout_id must be a string of letters, digits, dots, dashes or underscores starting with a letter or digit; got 'has/slash'
}

func ExampleCorrelationFromGlobalConfig() {
	globalConfig := []byte(`{"observability_enabled": true, "token_id_capture": {"enabled": true}}`)
	c, err := rollout.CorrelationFromGlobalConfig(globalConfig, true) // this agent opted into token capture
	if err != nil {
		panic(err)
	}
	path, err := c.URLPathForRun("/v1/responses", []byte(`{"_ng_rollout_id": "step7.task3"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(path)
	// Output: /ng-rollout/step7.task3/training-token-capture/v1/responses
}

func ExampleParseRequestPath() {
	for _, target := range []string{
		"/ng-rollout/3-1/v1/chat/completions",
		"/ng-rollout/a%2Fb/v1/messages",
		"/ng-rollout/3-1/v1/%2e%2e/admin",
		"/v1/responses",
	} {
		r := httptest.NewRequest(http.MethodPost, target, nil)
		p, ok, err := rollout.ParseRequestPath(r.URL.Path, r.URL.EscapedPath())
		fmt.Printf("%v %q %q %v\n", ok, p.ID, p.Rest, err != nil)
	}
	// Output:
	// true "3-1" "/v1/chat/completions" false
	// true "a/b" "/v1/messages" true
	// true "3-1" "/v1/../admin" true
	// false "" "" false
}

func ExampleID() {
	id := rollout.ID{Run: "run-7", Rollout: "3-1"}
	fmt.Println(id.TraceID(), id.RootSpanID())
	fmt.Println(rollout.ID{Rollout: "3-1"}.TraceID())
	// Output:
	// 923a321df6834d9bd235de904917be84 d738a03c0e7c112e
	// e39762d6698282a3e40c49ec8a777ecd
}
