// Package tokenview reads one rollout's training token capture for `gymtrace tokens`
// (docs/TOKENS.md §2, §3.6): its entries, its state, its intents without entries, and the build a
// finalization would make of it now — without freezing it — with why it is (or would be) masked.
package tokenview

import (
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rollouts"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/texttable"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/tokens"
)

// View is one rollout's token capture as read by [Read].
type View struct {
	tokens.Inspection
	// Build is what a finalization would build now ([tokens.TrajectoriesFromSource] over the
	// entries and state as they are, never frozen), without its rebuilt_response; null for a
	// retired capture.
	Build ojson.Value
	// Masked tells whether that build masks the rollout, Cause why ([rollouts.MaskCause]).
	Masked bool
	Cause  string
}

// peek is the capture as a Source that never freezes or drops: Freeze returns what a freeze would
// return now ([tokens.Inspection.Peek]).
type peek struct{ in *tokens.Inspection }

func (p peek) Freeze(string) (tokens.Snapshot, error)   { return p.in.Peek() }
func (p peek) Drop(string, string, int64) (bool, error) { return false, nil }

var _ tokens.Source = peek{}

// Read inspects rollout id's capture in store ([tokens.Store.Inspect]: the shared lock, nothing
// written but the lock file) and builds it with builder as a finalization would, with the rules of
// the freeze it runs first: Inspect computes the freeze's index recovery (docs/TOKENS.md §2.7) with
// the function the freeze applies, so a torn final line is left out of the entries (and reported,
// not cut), and an index offset past the file or a call id with conflicting payloads fails the
// build as it fails the freeze (Peek returns that error). A retired capture has no build: its
// rollout was finalized and its files dropped.
func Read(store *tokens.Store, id, builder string) (View, error) {
	in, err := store.Inspect(id)
	if err != nil {
		return View{}, err
	}
	v := View{Inspection: in, Build: ojson.Null()}
	if in.Retired {
		return v, nil
	}
	built := tokens.TrajectoriesFromSource(id, peek{&v.Inspection}, builder, "")
	capture, _ := built.Get("metrics")
	capture = capture.Clone()
	if e, ok := built.Get("error"); ok {
		capture.Set("error", e)
	}
	mask, _ := built.Get(tokens.MaskSampleKey)
	v.Masked = python.Truthy(mask)
	if v.Masked {
		unresolved, _ := built.Get("unresolved_retries")
		v.Cause = rollouts.MaskCause(capture, unresolved.Elems())
	}
	var kept []ojson.Member
	for _, m := range built.Members() {
		if m.Key != "rebuilt_response" {
			kept = append(kept, m)
		}
	}
	v.Build = ojson.Object(kept...)
	return v, nil
}

// AppendJSON appends v as one JSON object:
//
//	{"rollout_id", "state": {"frozen", "retired", "incomplete", "version", "snapshot_id"},
//	 "entries": [{"model_call_id", "prompt_tokens", "generation_tokens", "created_at"}],
//	 "entries_error": <text or null>, "index_error": <text or null>, "torn_tail_bytes": <int>,
//	 "intents": [...], "intents_without_entries": [...],
//	 "incomplete_marks": [...], "build": <the build without rebuilt_response, or null>,
//	 "masked": bool, "cause": <text or null>, "frozen_by_read": false}
func (v *View) AppendJSON(dst []byte) []byte {
	entries := make([]ojson.Value, len(v.Entries))
	for i, e := range v.Entries {
		entries[i] = ojson.Object(
			ojson.Member{Key: "model_call_id", Value: ojson.String(e.ModelCallID)},
			ojson.Member{Key: "prompt_tokens", Value: ojson.Int(int64(len(e.PromptTokenIDs)))},
			ojson.Member{Key: "generation_tokens", Value: ojson.Int(int64(len(e.GenerationTokenIDs)))},
			ojson.Member{Key: "created_at", Value: ojson.Float(e.CreatedAt)},
		)
	}
	entriesErr, indexErr, cause := ojson.Null(), ojson.Null(), ojson.Null()
	if v.EntriesErr != nil {
		entriesErr = ojson.String(tokens.ExceptionText(v.EntriesErr))
	}
	if v.IndexErr != nil {
		indexErr = ojson.String(tokens.ExceptionText(v.IndexErr))
	}
	if v.Masked {
		cause = ojson.String(v.Cause)
	}
	return ojson.Object(
		ojson.Member{Key: "rollout_id", Value: ojson.String(v.RolloutID)},
		ojson.Member{Key: "state", Value: ojson.Object(
			ojson.Member{Key: "frozen", Value: ojson.Bool(v.Frozen)},
			ojson.Member{Key: "retired", Value: ojson.Bool(v.Retired)},
			ojson.Member{Key: "incomplete", Value: ojson.Bool(v.Incomplete)},
			ojson.Member{Key: "version", Value: ojson.Int(v.Version)},
			ojson.Member{Key: "snapshot_id", Value: ojson.String(v.SnapshotID)},
		)},
		ojson.Member{Key: "entries", Value: ojson.Array(entries...)},
		ojson.Member{Key: "entries_error", Value: entriesErr},
		ojson.Member{Key: "index_error", Value: indexErr},
		ojson.Member{Key: "torn_tail_bytes", Value: ojson.Int(v.TornTail)},
		ojson.Member{Key: "intents", Value: strings2JSON(v.Intents)},
		ojson.Member{Key: "intents_without_entries", Value: strings2JSON(v.Dangling)},
		ojson.Member{Key: "incomplete_marks", Value: strings2JSON(v.Marks)},
		ojson.Member{Key: "build", Value: v.Build},
		ojson.Member{Key: "masked", Value: ojson.Bool(v.Masked)},
		ojson.Member{Key: "cause", Value: cause},
		ojson.Member{Key: "frozen_by_read", Value: ojson.Bool(false)},
	).AppendJSON(dst)
}

// WriteText writes v for a terminal: the state line, the entries as an aligned table (CALL ID,
// PROMPT and GENERATION token counts, CREATED AT in UTC), a torn final line the finalization would
// cut and its index recovery's refusal (docs/TOKENS.md §2.7), the intents without entries, the
// incomplete marks, the verdict of the read-only build, and a last line saying the read changed
// nothing (readOnlyNote).
func WriteText(w io.Writer, v *View) error {
	var b strings.Builder
	b.WriteString("rollout " + v.RolloutID + ": " + stateText(v) + "\n")
	if len(v.Entries) > 0 {
		rows := make([][]string, len(v.Entries))
		for i, e := range v.Entries {
			rows[i] = []string{printable(e.ModelCallID), strconv.Itoa(len(e.PromptTokenIDs)), strconv.Itoa(len(e.GenerationTokenIDs)), timeText(e.CreatedAt)}
		}
		b.WriteString("\n" + texttable.Strings([]string{"CALL ID", "PROMPT", "GENERATION", "CREATED AT"}, rows, 2, 3) + "\n")
	} else if v.EntriesErr == nil && !v.Retired {
		b.WriteString("no token entries\n")
	}
	if v.TornTail > 0 {
		b.WriteString("torn final line: " + strconv.FormatInt(v.TornTail, 10) + " bytes of an interrupted write, never acknowledged: a finalization cuts them (left in place by this read)\n")
	}
	// A line that does not read fails the index recovery and the entries' read alike: said once.
	indexErr := v.IndexErr != nil && (v.EntriesErr == nil || tokens.ExceptionText(v.IndexErr) != tokens.ExceptionText(v.EntriesErr))
	if indexErr {
		b.WriteString("index recovery refuses it: " + tokens.ExceptionText(v.IndexErr) + "\n")
	}
	if v.EntriesErr != nil {
		b.WriteString("entries unreadable: " + tokens.ExceptionText(v.EntriesErr) + "\n")
	}
	if len(v.Dangling) > 0 {
		b.WriteString("intents without entries: " + printable(strings.Join(v.Dangling, ", ")) + "\n")
	}
	if len(v.Marks) > 0 {
		b.WriteString("incomplete marks: " + strings.Join(quoted(v.Marks), ", ") + "\n")
	}
	switch {
	case v.Retired:
		b.WriteString("retired: an earlier finalization built this rollout, wrote its line and dropped the entries; a re-run keeps that line\n")
	case v.Masked && indexErr:
		b.WriteString("masked (mask_sample: true when finalized now): its index recovery fails (above)\n")
	case v.Masked && v.EntriesErr != nil:
		b.WriteString("masked (mask_sample: true when finalized now): its entries do not read (above)\n")
	case v.Masked:
		b.WriteString("masked (mask_sample: true when finalized now): " + v.Cause + "\n")
	default:
		b.WriteString("trainable when finalized now: one prefix chain")
		if m, ok := v.Build.Get("metrics"); ok {
			d, _ := m.Get("generated_tokens_delivered")
			b.WriteString(" of " + python.Str(d) + " generated tokens")
		}
		b.WriteString("\n")
	}
	b.WriteString(readOnlyNote(v) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// readOnlyNote is the text view's last line: what this read did to the capture (nothing), without
// contradicting the state line: a capture an earlier finalization froze is still frozen, this read
// only did not freeze it.
func readOnlyNote(v *View) string {
	if v.Frozen {
		return "(read only: already frozen by an earlier finalization; this read changed nothing)"
	}
	return "(read only: this read did not freeze the capture)"
}

func stateText(v *View) string {
	parts := []string{"not frozen"}
	if v.Frozen {
		parts[0] = "frozen"
	}
	if v.Retired {
		parts = append(parts, "retired")
	}
	if v.Incomplete {
		parts = append(parts, "marked incomplete")
	}
	s := strings.Join(parts, ", ") + "; version " + strconv.FormatInt(v.Version, 10)
	if v.SnapshotID != "" {
		s += ", snapshot " + v.SnapshotID
	}
	return s
}

func timeText(sec float64) string {
	if sec == 0 || math.IsNaN(sec) || math.IsInf(sec, 0) {
		return "-"
	}
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(frac*1e9)).UTC().Format("2006-01-02T15:04:05.000Z")
}

// printable replaces the control characters of s (which could drive a terminal) with U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = python.ReprStr(s)
	}
	return out
}

func strings2JSON(ss []string) ojson.Value {
	out := make([]ojson.Value, len(ss))
	for i, s := range ss {
		out[i] = ojson.String(s)
	}
	return ojson.Array(out...)
}
