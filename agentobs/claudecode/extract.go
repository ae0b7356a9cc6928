package claudecode

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// Source is the bundle source of every Claude Code bundle (SPEC §6.3); the compaction resolver
// runs only for bundles with this source (SPEC §5.4, §6.6).
const Source = "claude_code"

// Extract reads the Claude Code transcripts of one run from configDir, the run's CLAUDE_CONFIG_DIR,
// and returns its observation bundle, exactly as SPEC §6.4 describes Gym's extractor:
//
//   - every *.jsonl under configDir/projects (recursively, in path-component order) is read line by
//     line; other files in configDir (skills/, settings) are ignored;
//   - events are grouped into invocations by agentId (subagents) or sessionId (sessions);
//   - assistant message ids become ModelCallRefs when opts.ModelServerName is set (one per
//     distinct id per invocation: Claude Code writes one event per content block);
//   - compaction markers (compact_boundary, isCompactSummary, compactMetadata) become
//     ContextCompactionObservations, a boundary and its adjacent summary merged into one, with the
//     invocation's last call before and first new call after;
//   - tool_use / tool_result pairs become ToolCallObservations timed by the transcript
//     (timing_source "artifact");
//   - toolUseResult.agentId links a subagent to the tool call that spawned it (conflicting or
//     cyclic links are refused with a gap);
//   - the conversation of each invocation is kept as Responses items (SPEC §6.7);
//   - everything missing or ambiguous becomes an ObservationGap; transcript content never does.
//
// Records are invocations (by first appearance, then id), then tool calls (by invocation first
// appearance, then tool call id), then compactions (the run's attempts first). Where the reference
// is not deterministic, Extract is (package documentation, SPEC §9 #14).
//
// Reading problems are gaps, not errors (see the Gap constants), except an entry that breaks the
// reading rules of SPEC §0 D16 (a symbolic link below configDir, a transcript that is not a regular
// file or is larger than opts.MaxTranscriptBytes): the error is then a [*TranscriptError] and the
// bundle empty. Otherwise the error is non-nil only when opts is invalid (it names the field and
// the rule). Extract does not add the run-level gaps of SPEC §6.3 (model_call_ownership_unavailable,
// no_sandbox_runtime): [Observe] does. Safe for concurrent use; it reads the directory and keeps no
// state.
func Extract(configDir string, opts Options) (agentobs.AgentObservationBundle, error) {
	if err := opts.validate(); err != nil {
		return agentobs.AgentObservationBundle{}, err
	}
	x := newExtractor(osFS{}, opts)
	return x.extract(configDir)
}

// extractor holds one extraction's state (SPEC §6.4).
type extractor struct {
	fs       fileSystem
	opts     Options
	loc      *time.Location
	modelRef *agentobs.ModelServerRef
	gaps     []agentobs.ObservationGap

	order     []string // invocation ids in first-seen order (events, then attempts)
	invs      map[string]*invocation
	firstSeen map[string]int

	starts      map[toolKey][]toolStart
	finishes    map[toolKey][]toolFinish
	parents     map[string]parentLink // child invocation → its link
	parentOrder []string              // children in link order (Python dict insertion order)
	ambiguous   map[string]bool       // children with conflicting links
	compactions []*agentobs.ContextCompactionObservation
}

// invocation is one invocation's events and what was extracted from them.
type invocation struct {
	id           string
	events       []event
	isAgent      bool // some event carried a non-empty agentId
	refs         []agentobs.ModelCallRef
	conversation []json.RawMessage
}

type toolKey struct{ invocation, toolCallID string }

type toolStart struct {
	at   *float64
	name string
}

type toolFinish struct {
	at     *float64
	status agentobs.ToolCallStatus
}

// parentLink is the reference's parent tuple: (parent invocation, tool call id, result status,
// ordinal of the linking event).
type parentLink struct {
	invocation string
	toolCallID string
	status     agentobs.ToolCallStatus
	ordinal    int
}

// compactionMark remembers the previous event's compaction for the boundary/summary merge.
type compactionMark struct {
	entryIndex int
	isSummary  bool
	c          *agentobs.ContextCompactionObservation
}

func newExtractor(fsys fileSystem, opts Options) *extractor {
	loc := opts.Location
	if loc == nil {
		loc = time.Local
	}
	return &extractor{
		fs:        fsys,
		opts:      opts,
		loc:       loc,
		modelRef:  opts.modelRef(),
		invs:      make(map[string]*invocation),
		firstSeen: make(map[string]int),
		starts:    make(map[toolKey][]toolStart),
		finishes:  make(map[toolKey][]toolFinish),
		parents:   make(map[string]parentLink),
		ambiguous: make(map[string]bool),
	}
}

func (x *extractor) gap(code string, invocationID string, detail *string) {
	x.gaps = append(x.gaps, newGap(code, ptr(invocationID), detail))
}

func (x *extractor) extract(configDir string) (agentobs.AgentObservationBundle, error) {
	events, err := readEvents(x.fs, configDir, x.opts.maxTranscriptBytes(), &x.gaps)
	if err != nil {
		return agentobs.AgentObservationBundle{}, err
	}

	var attempts []*agentobs.ContextCompactionObservation
	for _, a := range x.opts.CompactionAttempts {
		outcome := a.Outcome
		if outcome == "" {
			outcome = agentobs.CompactionOutcomeUnknown
		}
		switch outcome {
		case agentobs.CompactionOutcomeFailed, agentobs.CompactionOutcomeAborted, agentobs.CompactionOutcomeUnknown:
			if a.InvocationID != "" {
				attempts = append(attempts, &agentobs.ContextCompactionObservation{InvocationID: a.InvocationID, Outcome: outcome})
			}
		}
	}
	if len(events) == 0 {
		x.gaps = append(x.gaps, newGap(GapAgentTranscriptUnavailable, nil, nil))
		if len(attempts) == 0 {
			return agentobs.AgentObservationBundle{Source: Source, Records: []agentobs.Record{}, Gaps: x.gaps}, nil
		}
	}

	for _, e := range events {
		agentID, isAgent := nonEmptyString(e.get("agentId"))
		id := agentID
		if !isAgent {
			sid, _ := e.get("sessionId")
			id, _ = sid.AsString()
		}
		inv := x.invocation(id, e.ordinal)
		inv.events = append(inv.events, e)
		if isAgent {
			inv.isAgent = true
		}
	}
	for k, a := range attempts {
		x.invocation(a.InvocationID, len(events)+k)
		x.gap(GapCompactionBeforeUnavailable, a.InvocationID, nil)
		x.gap(GapCompactionAfterUnavailable, a.InvocationID, nil)
	}
	x.compactions = attempts

	for _, id := range x.order {
		x.processInvocation(x.invs[id])
	}

	for _, c := range x.compactions {
		x.gap(GapCompactionReferenceUnavailable, c.InvocationID, nil)
		if c.Outcome == agentobs.CompactionOutcomeUnknown || c.Outcome == "" {
			x.gap(GapCompactionOutcomeUnavailable, c.InvocationID, nil)
		}
		if c.ObservedAt == nil {
			x.gap(GapCompactionTimestampMissing, c.InvocationID, nil)
		}
	}

	tools := x.toolObservations()
	invocations := x.assembleInvocations()

	records := make([]agentobs.Record, 0, len(invocations)+len(tools)+len(x.compactions))
	for _, inv := range invocations {
		records = append(records, inv)
	}
	for _, t := range tools {
		records = append(records, t)
	}
	for _, c := range x.compactions {
		records = append(records, c)
	}
	bundle := agentobs.AgentObservationBundle{Source: Source, Records: records, Gaps: x.gaps}
	if err := bundle.Validate(); err != nil {
		// Unreachable by construction; reported rather than returned invalid.
		return agentobs.AgentObservationBundle{}, fmt.Errorf("claudecode: extracted bundle is invalid: %w", err)
	}
	return bundle, nil
}

// invocation returns the invocation id, creating it (first seen at ordinal) when new.
func (x *extractor) invocation(id string, ordinal int) *invocation {
	if inv, ok := x.invs[id]; ok {
		return inv
	}
	inv := &invocation{id: id}
	x.invs[id] = inv
	x.order = append(x.order, id)
	x.firstSeen[id] = ordinal
	return inv
}

// processInvocation walks one invocation's events in file order (SPEC §6.4 "Per invocation").
func (x *extractor) processInvocation(inv *invocation) {
	seen := make(map[string]bool)
	var last *agentobs.ModelCallRef
	var pending []*agentobs.ContextCompactionObservation
	var previous *compactionMark

	for entryIndex, e := range inv.events {
		if c, isSummary, ok := x.compaction(e, inv.id); ok {
			if previous != nil && previous.entryIndex+1 == entryIndex && previous.isSummary != isSummary {
				mergeCompaction(previous.c, c)
				c = previous.c
			} else {
				c.BeforeModelCall = cloneRef(last)
				x.compactions = append(x.compactions, c)
				pending = append(pending, c)
				if last == nil {
					x.gap(GapCompactionBeforeUnavailable, inv.id, nil)
				}
			}
			previous = &compactionMark{entryIndex: entryIndex, isSummary: isSummary, c: c}
		} else {
			previous = nil
		}

		message, _ := e.get("message")
		if message.Kind() != ojson.KindObject {
			continue
		}
		roleValue, ok := message.Get("role")
		if !ok || !python.Truthy(roleValue) {
			roleValue, _ = e.get("type")
		}
		role, _ := roleValue.AsString() // a non-string role is "another role": ignored
		content, hasContent := message.Get("content")

		switch role {
		case "assistant":
			var ref *agentobs.ModelCallRef
			if rid, ok := nonEmptyString(message.Get("id")); !ok {
				x.gap(GapModelResponseIDMissing, inv.id, nil)
			} else if x.modelRef != nil && !seen[rid] {
				ref = &agentobs.ModelCallRef{ModelRef: ptr(*x.modelRef), ResponseID: ptr(rid)}
				inv.refs = append(inv.refs, *ref)
				seen[rid] = true
			}
			for _, p := range pending {
				p.AfterModelCall = cloneRef(ref)
				if ref == nil {
					x.gap(GapCompactionAfterUnavailable, inv.id, nil)
				}
			}
			pending = pending[:0]
			if ref != nil {
				last = ref
			}
			x.assistantBlocks(inv, e, message, content, hasContent)
		case "user", "system", "developer":
			x.userBlocks(inv, e, role, content, hasContent)
		}
	}
	for range pending {
		x.gap(GapCompactionAfterUnavailable, inv.id, nil)
	}
}
