package rollouts

import (
	"bytes"
	"fmt"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/rolloutline"
)

// observationJoiners maps a bundle source to the join SPEC §5.4 runs for it; a source not listed
// gets the generic join (SPEC §6.5, [agentobs.Join]).
var observationJoiners = map[string]func(agentobs.AgentObservationBundle, []capture.ModelCallRecord) agentobs.AgentObservationBundle{}

// joinObservations joins the row's ng_agent_observations with its captured calls (SPEC §5.4): the
// bundle is validated strictly ([agentobs.DecodeBundle]), joined (source-specific resolution first,
// then SPEC §6.5) and written back in place, dumped with all fields. A row without the key, or with
// null, takes the bundle of the rollout's <id>.observations.jsonl from the first store holding one
// ([agentobs.ReadBundle]: spans recorded by agentobs or by any language's GenAI instrumentation);
// with no such file the row is left as it is and joined reports false. An invalid bundle is an error
// naming the problem; the row then keeps its ng_agent_observations text unchanged (nothing is lost).
func joinObservations(l *rolloutline.Line, id string, stores []*capture.Store, calls []capture.ModelCallRecord) (joined bool, err error) {
	raw, ok := l.Get(agentobs.AttachmentKey)
	var bundle agentobs.AgentObservationBundle
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		b, found, err := observationsFile(stores, id)
		if err != nil || !found {
			return false, err
		}
		bundle = b
	} else {
		b, err := agentobs.DecodeBundle(raw)
		if err != nil {
			return false, fmt.Errorf("%s left unchanged: %w", agentobs.AttachmentKey, err)
		}
		bundle = b
	}
	join := agentobs.Join
	if j, ok := observationJoiners[bundle.Source]; ok {
		join = j
	}
	out, err := join(bundle, calls).AppendJSON(nil)
	if err != nil {
		return false, fmt.Errorf("%s left unchanged: %w", agentobs.AttachmentKey, err)
	}
	if err := l.Set(agentobs.AttachmentKey, out); err != nil {
		return false, fmt.Errorf("%s left unchanged: %w", agentobs.AttachmentKey, err)
	}
	return true, nil
}

// observationsFile returns the bundle of id's observations file in the first store that has one.
func observationsFile(stores []*capture.Store, id string) (agentobs.AgentObservationBundle, bool, error) {
	for _, s := range stores {
		b, found, err := agentobs.ReadBundle(s, id)
		if err != nil {
			return b, false, fmt.Errorf("observations file of %s: %w", id, err)
		}
		if found {
			return b, true, nil
		}
	}
	return agentobs.AgentObservationBundle{}, false, nil
}
