package rollout

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Names and keys of SPEC §1.1. They are literal: Gym's agents, model servers and readers use the
// same strings.
const (
	// PathSegment is the first path segment of a rollout prefix, "/ng-rollout/<id>" (Gym's
	// ROLLOUT_PATH_PREFIX). [PathPrefix] builds the whole prefix.
	PathSegment = "ng-rollout"
	// TokenCaptureSegment is the optional segment after the id that asks for training-token
	// capture: "/ng-rollout/<id>/training-token-capture/..." (Gym's TOKEN_CAPTURE_PATH_SEGMENT).
	TokenCaptureSegment = "training-token-capture"

	// TaskIndexKey is the run-body key of the task index.
	TaskIndexKey = "_ng_task_index"
	// IndexKey is the run-body key of the rollout index within a task.
	IndexKey = "_ng_rollout_index"
	// AttemptIndexKey is the run-body key of the re-dispatch attempt; an attempt above 0 adds the
	// suffix "-a<n>" to the id (SPEC §1.2 step 3).
	AttemptIndexKey = "_ng_attempt_index"
	// IDKey is the run-body key of an explicit rollout id, which wins over the indices.
	IDKey = "_ng_rollout_id"

	// ObservabilityEnabledKey is the global-config key that turns model-call capture on (§1.4).
	ObservabilityEnabledKey = "observability_enabled"
	// ModelCallCaptureDirKey is the global-config key of the capture directory.
	ModelCallCaptureDirKey = "model_call_capture_dir"
	// TokenIDCaptureKey is the global-config key of the training-token capture block
	// ({"enabled": ..., "all_agents": ...}), and the agent-config flag of the same name.
	TokenIDCaptureKey = "token_id_capture"

	// IDPattern is the pattern every explicit id (§1.2) and, by SPEC §0 D12, every id an entry
	// point accepts must match over the whole string (D10); [ValidateID] checks it without regexp.
	IDPattern = `^[A-Za-z0-9][A-Za-z0-9._-]*$`

	// MaxIDBytes is the longest rollout id (and run id) accepted, in bytes (SPEC §0 D12).
	MaxIDBytes = 200
)

// ErrInvalidID is matched (errors.Is) by every error reporting a rollout id that breaks SPEC §0
// D12: a bad explicit _ng_rollout_id, a bad prefix, header or baggage id, a prefix that holds a
// percent-encoded separator or a rest with a dot segment ([ParseRequestPath]).
var ErrInvalidID = errors.New("invalid rollout id")

// ErrInvalidRun is matched (errors.Is) by every error reporting a run id that breaks the rule of
// [ValidateRun].
var ErrInvalidRun = errors.New("invalid run id")

// ValidateID checks a rollout id against the one id rule of SPEC §0 D12: it must fully match
// [IDPattern] (no trailing newline, D10) and be at most [MaxIDBytes] bytes long. The error names the
// id (Go %q) and the rule, and matches [ErrInvalidID]. Every id Gym's agents produce passes, and
// every id that passes is a safe file name. The stores' file-name check (SPEC §2.2,
// capture.ValidateRolloutID) stays the reference's looser one.
func ValidateID(id string) error {
	return checkID(ErrInvalidID, id)
}

// ValidateRun checks a run id (the proxy's --run-id) with the rule of [ValidateID], so it is a safe
// directory name; the error matches [ErrInvalidRun]. The empty run id ("no run namespace"
// elsewhere) is refused: call ValidateRun only for a run id given.
func ValidateRun(run string) error {
	return checkID(ErrInvalidRun, run)
}

func checkID(kind error, id string) error {
	switch {
	case len(id) > MaxIDBytes:
		return fmt.Errorf("%w %q: longer than %d bytes (%d)", kind, id, MaxIDBytes, len(id))
	case !matchIDPattern(id):
		return fmt.Errorf("%w %q: must match %s (a letter or digit, then letters, digits, dots, dashes or underscores)", kind, id, IDPattern)
	}
	return nil
}

// matchIDPattern reports whether id fully matches IDPattern (byte-wise: non-ASCII fails).
func matchIDPattern(id string) bool {
	if id == "" || !isASCIIAlnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		c := id[i]
		if !isASCIIAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isASCIIAlnum(c byte) bool {
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
}

// RunDir returns the capture directory of a run: dir itself when run is "" (Gym's layout), else
// dir/run, so concurrent runs with the same rollout ids never share a file. A non-empty run must
// pass [ValidateRun] (its error is wrapped). The directory is not created or examined.
func RunDir(dir, run string) (string, error) {
	if run == "" {
		return dir, nil
	}
	if err := ValidateRun(run); err != nil {
		return "", fmt.Errorf("run capture dir: %w", err)
	}
	return filepath.Join(dir, run), nil
}
