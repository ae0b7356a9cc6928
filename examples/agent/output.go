package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/rollout"
)

// rolloutLine is the agent's rollout line as NeMo Gym's collector writes one, newline-terminated:
// {"_ng_rollout_id": id, "prompt": task, "response": answer} and, when bundle is not nil,
// "ng_agent_observations": the bundle (SPEC §5.4) — the way an agent returns its observations in its
// run response. `gymtrace attach` adds ng_model_call_capture and joins the observations (from the
// line, else from the rollout's observations file) with the captured calls.
func rolloutLine(id, task, answer string, bundle *agentobs.AgentObservationBundle) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range [][2]string{{rollout.IDKey, id}, {"prompt", task}, {"response", answer}} {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeJSONString(&b, kv[0]); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := writeJSONString(&b, kv[1]); err != nil {
			return nil, err
		}
	}
	if bundle != nil {
		obs, err := bundle.AppendJSON(nil)
		if err != nil {
			return nil, fmt.Errorf("rollout line: %w", err)
		}
		fmt.Fprintf(&b, ",%q:", agentobs.AttachmentKey)
		b.Write(obs)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// writeJSONString writes s as a JSON string without HTML escaping.
func writeJSONString(b *bytes.Buffer, s string) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("rollout line: %w", err)
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
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
