package rollouts

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"
	"github.com/gymtrace/gymtrace/rollout"
)

// identityKeys are the run-body keys SPEC §1.2 reads to find a row's rollout id.
var identityKeys = []string{rollout.IDKey, rollout.TaskIndexKey, rollout.IndexKey, rollout.AttemptIndexKey}

// excerptBytes bounds how much of an unreadable line an error quotes.
const excerptBytes = 80

// parseRow parses one non-blank rollout line and derives its rollout id as Gym does (SPEC §1.2); ok
// is false for a row without an identity. err, naming the value and the rule, reports a line that
// is not a JSON object, an id or attempt index SPEC §1.2 rejects, or a derived id the proxy would
// refuse (SPEC D12, [rollout.ValidateID]; e.g. "_ng_task_index": -1 gives "-1-1"), so attach and
// clear accept exactly the ids the proxy captures under.
func parseRow(line []byte) (l rolloutline.Line, id string, ok bool, err error) {
	l, err = rolloutline.Parse(line)
	if err != nil {
		return l, "", false, fmt.Errorf("not a JSON object (line starts %q): %w", excerpt(line), err)
	}
	id, ok, err = rowID(&l)
	if err != nil || !ok {
		return l, "", false, err
	}
	if err := rollout.ValidateID(id); err != nil {
		return l, "", false, fmt.Errorf("rollout id of the row is not one the proxy accepts (SPEC D12): %w", err)
	}
	return l, id, true, nil
}

// rowID applies SPEC §1.2 to the identity keys of l (their last occurrence, as a JSON reader sees
// them), so the rest of a large row is not decoded again.
func rowID(l *rolloutline.Line) (string, bool, error) {
	var body rolloutline.Line
	for _, k := range identityKeys {
		if raw, ok := l.Get(k); ok {
			_ = body.Set(k, raw) // raw is valid JSON: Parse checked it
		}
	}
	return rollout.IDFromRunBody(body.Bytes())
}

// excerpt returns the start of line for error messages: at most excerptBytes bytes, cut on a rune
// boundary, without its line terminator.
func excerpt(line []byte) string {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) <= excerptBytes {
		return string(line)
	}
	cut := excerptBytes
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return string(line[:cut]) + "..."
}
