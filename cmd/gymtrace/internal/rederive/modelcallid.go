package rederive

import "github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"

// modelCallID returns the model_call_id of a record line, if it is a string.
func modelCallID(line []byte) (string, bool) {
	l, err := rolloutline.Parse(line)
	if err != nil {
		return "", false
	}
	return getString(&l, "model_call_id")
}
