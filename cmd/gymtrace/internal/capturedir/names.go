package capturedir

import (
	"strings"

	"github.com/gymtrace/gymtrace/capture"
)

// ManagedSuffixes are the name endings of the files a capture directory holds per rollout id:
// capture records and the incomplete marker (SPEC §2.1), observations (SPEC §6, beside the capture
// file) and the training-token store's files (TOKENS.md §2.1: entries, state, lock, marker,
// intents). No output of the CLI may take such a name (see [IsManaged]).
var ManagedSuffixes = []string{
	capture.CaptureFileSuffix, capture.MarkerFileSuffix, capture.ObservationsFileSuffix,
	".tokens.jsonl", ".tokens.state.json", ".tokens.lock", ".tokens.incomplete", ".tokens.intents",
}

// tokenStateTempPrefix starts the temporary file of a token state write (TOKENS.md §2.1).
const tokenStateTempPrefix = ".tokens-state-"

// IsManaged reports whether name (a file name, without directory) is one a capture directory's
// writers own: it ends with one of [ManagedSuffixes] or is a token state write's temporary file.
func IsManaged(name string) bool {
	for _, s := range ManagedSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return strings.HasPrefix(name, tokenStateTempPrefix)
}
