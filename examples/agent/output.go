package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/gymtrace/gymtrace/agentobs"
)

// identity is the run request's identity keys (SPEC §1.1): the dispatched row's indices and, when
// given, its explicit rollout id. Its JSON is the body from which Gym derives the rollout id (SPEC
// §1.2: the explicit id if any, else "<task>-<rollout>").
type identity struct {
	TaskIndex    int    `json:"_ng_task_index"`
	RolloutIndex int    `json:"_ng_rollout_index"`
	ID           string `json:"_ng_rollout_id,omitempty"` // rollout.IDKey
}

// rolloutLine is the agent's rollout line as NeMo Gym's collector writes one, newline-terminated:
// the identity keys id (which the collector copies from the row onto the result,
// SPEC §5.5 step 1, and the ng_trajectory projection needs), "prompt": task, "response": answer and,
// when bundle is not nil, "ng_agent_observations": the bundle (SPEC §5.4) — the way an agent returns
// its observations in its run response. `gymtrace attach` adds ng_model_call_capture, joins the
// observations (from the line, else from the rollout's observations file) with the captured calls
// and projects ng_trajectory.
func rolloutLine(id identity, task, answer string, bundle *agentobs.AgentObservationBundle) ([]byte, error) {
	line := struct {
		identity
		Prompt       string          `json:"prompt"`
		Response     string          `json:"response"`
		Observations json.RawMessage `json:"ng_agent_observations,omitempty"` // agentobs.AttachmentKey
	}{identity: id, Prompt: task, Response: answer}
	if bundle != nil {
		obs, err := bundle.AppendJSON(nil)
		if err != nil {
			return nil, fmt.Errorf("rollout line: %w", err)
		}
		line.Observations = obs
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // no HTML escaping; Encode ends the line with "\n"
	enc.SetEscapeHTML(false)
	if err := enc.Encode(line); err != nil {
		return nil, fmt.Errorf("rollout line: %w", err)
	}
	return b.Bytes(), nil
}

// writeBundle writes bundle's JSON (SPEC §6.2 JSON mode, one line) to path, mode 0600.
func writeBundle(path string, bundle agentobs.AgentObservationBundle) error {
	data, err := bundle.AppendJSON(nil)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}
