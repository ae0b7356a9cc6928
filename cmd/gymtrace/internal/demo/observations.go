package demo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/capture"
)

// ObservationSummary is one rollout's ng_agent_observations as the attach step left them: the
// agent's observations (read from its <rollout_id>.observations.jsonl) joined with the captured
// calls (SPEC §5.4, §6.5).
type ObservationSummary struct {
	Attached    bool // the attached line has ng_agent_observations
	Invocations int  // agent_invocation records
	ToolCalls   int  // tool_call records
	Compactions int  // context_compaction records
	Sandboxes   int  // sandbox records
	// References counts the model-call references of the invocations (model_calls) and compactions
	// (model_calls, before_model_call, after_model_call); Resolved those whose model_call_id is the
	// model_call_id of one of the rollout's captured calls.
	References, Resolved int
	// Gaps are the bundle's gaps as "code" or "code (detail)", in order.
	Gaps []string
	// ToolMS is the summed duration_ms of the tool calls (0 when none has one).
	ToolMS float64
	// SandboxCPUS is the summed measured cpu_time_s of the sandbox runs; PeakMemoryMiB the largest
	// measured peak_memory_mib (nil when none was measured).
	SandboxCPUS   float64
	PeakMemoryMiB *float64
}

// summarizeObservations summarizes bundle against the rollout's captured calls.
func summarizeObservations(bundle agentobs.AgentObservationBundle, calls []capture.ModelCallRecord) ObservationSummary {
	captured := map[string]bool{}
	for _, c := range calls {
		if c.ModelCallID != nil {
			captured[*c.ModelCallID] = true
		}
	}
	s := ObservationSummary{Attached: true}
	count := func(refs ...*agentobs.ModelCallRef) {
		for _, r := range refs {
			if r == nil {
				continue
			}
			s.References++
			if r.ModelCallID != nil && captured[*r.ModelCallID] {
				s.Resolved++
			}
		}
	}
	for _, rec := range bundle.Records {
		switch v := rec.(type) {
		case *agentobs.AgentInvocation:
			s.Invocations++
			for i := range v.ModelCalls {
				count(&v.ModelCalls[i])
			}
		case *agentobs.ToolCallObservation:
			s.ToolCalls++
			if v.DurationMS != nil {
				s.ToolMS += *v.DurationMS
			}
		case *agentobs.ContextCompactionObservation:
			s.Compactions++
			count(v.BeforeModelCall, v.AfterModelCall)
			for i := range v.ModelCalls {
				count(&v.ModelCalls[i])
			}
		case *agentobs.SandboxObservation:
			s.Sandboxes++
			if v.CPUTimeS != nil {
				s.SandboxCPUS += *v.CPUTimeS
			}
			if v.PeakMemoryMiB != nil && (s.PeakMemoryMiB == nil || *v.PeakMemoryMiB > *s.PeakMemoryMiB) {
				s.PeakMemoryMiB = agentobs.Ptr(*v.PeakMemoryMiB)
			}
		}
	}
	for _, g := range bundle.Gaps {
		text := g.Code
		if g.Detail != nil {
			text += " (" + *g.Detail + ")"
		}
		s.Gaps = append(s.Gaps, text)
	}
	return s
}

// readObservationSummaries reads the attached rollouts file (one line per rollout, in the order of
// rs) and fills each rollout's Observations from its ng_agent_observations and its captured calls
// in store. A line that does not decode, or an ng_agent_observations that is not a valid bundle, is
// an error naming the rollout.
func readObservationSummaries(attachedPath string, store *capture.Store, rs []Rollout) error {
	f, err := os.Open(attachedPath)
	if err != nil {
		return fmt.Errorf("read observations: %w", err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxAnswerBytes)
	for i := range rs {
		r := &rs[i]
		if !sc.Scan() {
			return fmt.Errorf("read observations: %s has no line for rollout %s: %w", attachedPath, r.ID, sc.Err())
		}
		var row map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return fmt.Errorf("read observations of %s: %w", r.ID, err)
		}
		raw, ok := row[agentobs.AttachmentKey]
		if !ok {
			r.Observations = ObservationSummary{}
			continue
		}
		bundle, err := agentobs.DecodeBundle(raw)
		if err != nil {
			return fmt.Errorf("read observations of %s: %w", r.ID, err)
		}
		calls, _, err := store.ReadAvailableModelCallRecords(r.ID)
		if err != nil {
			return fmt.Errorf("read observations of %s: %w", r.ID, err)
		}
		r.Observations = summarizeObservations(bundle, calls)
	}
	return nil
}
