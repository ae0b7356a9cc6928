package claudecode

import (
	"errors"
	"fmt"

	"github.com/gymtrace/gymtrace/agentobs"
)

// Observe produces the ng_agent_observations bundle of one Claude Code run the way Gym's Claude
// Code agent does after the CLI exits (SPEC §6.3): [Extract] on configDir; if no model server is
// configured (opts.ModelServerName empty) gap model_call_ownership_unavailable is appended; if
// extraction fails the bundle is {source: "claude_code", gaps: [observation_parse_failed]}; gap
// no_sandbox_runtime is always appended last.
//
// Gym emits observations only for runs with a rollout id, so opts.RolloutID is required. Invalid
// options are an error naming the field and the rule (the bundle is then empty). An entry below
// configDir that breaks the reading rules of SPEC §0 D16 is a [*TranscriptError], returned together
// with the bundle to record for the run instead: {source: "claude_code", records: [], gaps:
// [claude_code_transcript_unreadable (detail: the entry's path below configDir and the rule),
// no_sandbox_runtime]}. Everything else about the transcripts is reported as gaps. Safe for
// concurrent use.
func Observe(configDir string, opts Options) (agentobs.AgentObservationBundle, error) {
	if opts.RolloutID == "" {
		return agentobs.AgentObservationBundle{}, errors.New("claudecode: options: RolloutID is required: Claude Code observations belong to a correlated rollout (SPEC §6.3)")
	}
	if err := opts.validate(); err != nil {
		return agentobs.AgentObservationBundle{}, err
	}
	return observe(newExtractor(osFS{}, opts), configDir)
}

// observe is Observe with the extractor given (tests inject file-system failures).
func observe(x *extractor, configDir string) (agentobs.AgentObservationBundle, error) {
	bundle, err := safeExtract(x, configDir)
	if te, ok := errors.AsType[*TranscriptError](err); ok {
		return agentobs.AgentObservationBundle{Source: Source, Records: []agentobs.Record{},
			Gaps: []agentobs.ObservationGap{newGap(GapClaudeCodeTranscriptUnreadable, nil, ptr(te.detail())),
				newGap(GapNoSandboxRuntime, nil, nil)}}, te
	}
	if err != nil {
		bundle = agentobs.AgentObservationBundle{Source: Source, Records: []agentobs.Record{},
			Gaps: []agentobs.ObservationGap{newGap(GapObservationParseFailed, nil, nil)}}
	} else if x.modelRef == nil {
		bundle.Gaps = append(bundle.Gaps, newGap(GapModelCallOwnershipUnavailable, nil, nil))
	}
	bundle.Gaps = append(bundle.Gaps, newGap(GapNoSandboxRuntime, nil, nil))
	return bundle, nil
}

// safeExtract runs the extractor, turning a panic into an error: SPEC §6.3 reports any extractor
// failure as observation_parse_failed instead of losing the run.
func safeExtract(x *extractor, configDir string) (b agentobs.AgentObservationBundle, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("claudecode: extractor panicked: %v", r)
		}
	}()
	return x.extract(configDir)
}
