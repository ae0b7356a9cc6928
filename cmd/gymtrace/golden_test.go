package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"
)

// The capture goldens (issue #13 step 0) pin what the demo and every conformance case leave on
// disk: each capture file's lines, observations files, markers and, for the demo, the rollouts
// files, byte for byte except for the fields that differ from run to run (volatileFields).

var updateGolden = flag.Bool("update", false, "rewrite the capture goldens under testdata/golden/")

// volatileKind says how a golden writes a field that differs between two runs of the same case.
type volatileKind int

const (
	// volatileID is a random id (32 or 16 hex characters). Every occurrence of its value as a
	// JSON string, in any line of the case, becomes "<id-N>", numbered by first appearance at
	// an id field, so the references between lines (span parents, model-call links,
	// invocation ids) are still compared.
	volatileID volatileKind = iota
	// volatileValue is a clock, latency or measurement: its value becomes "<volatile>"; null
	// stays null, so whether it has a value is still compared.
	volatileValue
	// volatileNullable is a measurement that may also be null in some runs: any value becomes
	// "<volatile>".
	volatileNullable
	// volatileMember is a member that only some runs have: it is left out.
	volatileMember
)

// volatileFields names every field that differs between runs, as a JSON Pointer into a line of
// a capture, observations or rollouts file; "*" stands for any one member name or array index.
// Everything else must stay byte for byte what the golden holds.
var volatileFields = []struct {
	ptr  string
	kind volatileKind
}{
	// Capture lines (SPEC §3.1 and the trace_id/span_id addition of SPEC §0; trace_id derives from
	// the rollout id and is compared).
	{"/model_call_id", volatileID}, // uuid4 hex per call
	{"/span_id", volatileID},       // the model-call span, or the observation span, random
	{"/started_at", volatileValue},
	{"/completed_at", volatileValue},
	{"/latency_ms", volatileValue},
	{"/latency_ttft_ms", volatileValue},

	// Observation lines (the demo's agent spans).
	{"/start_time_unix_nano", volatileValue},
	{"/end_time_unix_nano", volatileValue},
	{"/events/*/time_unix_nano", volatileValue},
	{"/attributes/gymtrace.sandbox.wall_time_s", volatileValue},
	{"/attributes/gymtrace.sandbox.cpu_time_s", volatileValue},
	{"/attributes/gymtrace.sandbox.peak_memory_mib", volatileMember}, // rusage: absent when it reads 0

	// rollouts.attached.jsonl (the same clocks and measurements inside the attachments).
	{"/ng_model_call_capture/metrics/latency_total_ms", volatileValue},
	{"/ng_model_call_capture/calls/*/started_at", volatileValue},
	{"/ng_model_call_capture/calls/*/completed_at", volatileValue},
	{"/ng_model_call_capture/calls/*/latency_total_ms", volatileValue},
	{"/ng_model_call_capture/calls/*/latency_ttft_ms", volatileValue},
	{"/ng_agent_observations/records/*/started_at", volatileValue},
	{"/ng_agent_observations/records/*/completed_at", volatileValue},
	{"/ng_agent_observations/records/*/observed_at", volatileValue},
	{"/ng_agent_observations/records/*/duration_ms", volatileValue},
	{"/ng_agent_observations/records/*/wall_time_s", volatileValue},
	{"/ng_agent_observations/records/*/cpu_time_s", volatileValue},
	{"/ng_agent_observations/records/*/peak_memory_mib", volatileNullable},
	{"/ng_trajectory/invocations/*/duration_ms", volatileValue},
	{"/ng_trajectory/model_calls/*/started_at", volatileValue},
	{"/ng_trajectory/model_calls/*/completed_at", volatileValue},
	{"/ng_trajectory/model_calls/*/duration_ms", volatileValue},
	{"/ng_trajectory/model_calls/*/response_metadata/latency_ttft_ms", volatileValue},
	{"/ng_trajectory/turns/*/timestamp", volatileValue},
	{"/ng_trajectory/tool_calls/*/started_at", volatileValue},
	{"/ng_trajectory/tool_calls/*/completed_at", volatileValue},
	{"/ng_trajectory/tool_calls/*/duration_ms", volatileValue},

	// Token captures of the demo's training run (docs/TOKENS.md §2): an entry's created_at, the
	// state file's snapshot id, its entry digests (over lines holding created_at, keyed by the
	// random model_call_ids, so even their order varies: the whole object) and indexed size
	// (created_at's text length varies).
	{"/created_at", volatileValue},
	{"/snapshot_id", volatileID},
	{"/entry_digests", volatileValue},
	{"/indexed_size", volatileValue},

	// Case 042 (concurrent writers): which writer and sequence number a line holds depends on
	// the interleaving. With them replaced all its lines are equal, which the golden states.
	{"/request/gymtrace_test/writer", volatileValue},
	{"/request/gymtrace_test/seq", volatileValue},
}

// volatileAt returns the kind of the field at ptr, if it is volatile.
func volatileAt(ptr string) (volatileKind, bool) {
	segs := strings.Split(ptr, "/")
	for _, f := range volatileFields {
		rule := strings.Split(f.ptr, "/")
		if len(rule) == len(segs) && segmentsMatch(rule, segs) {
			return f.kind, true
		}
	}
	return 0, false
}

func segmentsMatch(rule, segs []string) bool {
	for i := range rule {
		if rule[i] != "*" && rule[i] != segs[i] {
			return false
		}
	}
	return true
}

// edit replaces line[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// lineWalker finds the volatile fields of one JSON line.
type lineWalker struct {
	dec   *jsontext.Decoder
	line  []byte
	edits []edit
	ids   []string
}

// value reads the value at ptr, recording edits for volatile fields below it.
func (w *lineWalker) value(ptr string) error {
	if kind, ok := volatileAt(ptr); ok && kind != volatileMember {
		v, err := w.dec.ReadValue()
		if err != nil {
			return err
		}
		end := int(w.dec.InputOffset())
		start := end - len(v)
		switch {
		case kind == volatileID:
			var id string
			if json.Unmarshal(v, &id) == nil && id != "" {
				w.ids = append(w.ids, id)
			}
		case kind == volatileNullable || string(v) != "null":
			w.edits = append(w.edits, edit{start, end, `"<volatile>"`})
		}
		return nil
	}
	switch w.dec.PeekKind() {
	case '{':
		if _, err := w.dec.ReadToken(); err != nil {
			return err
		}
		first := true
		for w.dec.PeekKind() == '"' {
			memberStart := int(w.dec.InputOffset()) // just after '{' or the previous value
			name, err := w.dec.ReadToken()
			if err != nil {
				return err
			}
			p := ptr + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(name.String())
			if kind, ok := volatileAt(p); ok && kind == volatileMember {
				if err := w.dec.SkipValue(); err != nil {
					return err
				}
				end := int(w.dec.InputOffset())
				if first && end < len(w.line) && w.line[end] == ',' {
					end++ // the first member: drop the comma after it instead of the one before
				}
				w.edits = append(w.edits, edit{memberStart, end, ""})
				continue
			}
			first = false
			if err := w.value(p); err != nil {
				return err
			}
		}
		_, err := w.dec.ReadToken() // '}', or the error that stopped the loop
		return err
	case '[':
		if _, err := w.dec.ReadToken(); err != nil {
			return err
		}
		for i := 0; w.dec.PeekKind() != ']' && w.dec.PeekKind() != 0; i++ {
			if err := w.value(ptr + "/" + strconv.Itoa(i)); err != nil {
				return err
			}
		}
		_, err := w.dec.ReadToken()
		return err
	}
	return w.dec.SkipValue()
}

// goldenFile is one file of a case's output, by name.
type goldenFile struct {
	name    string
	content []byte
}

// hexString matches a JSON string holding 16 or 32 lowercase hex digits: a span id, trace id or
// model-call id.
var hexString = regexp.MustCompile(`"[0-9a-f]{16}(?:[0-9a-f]{16})?"`)

// goldenText renders a case's files as its golden: per file (sorted by name) a "# name" line, then
// its lines with the volatile fields replaced; a run of equal lines is written once, followed by
// "# N more like the line above". An empty file (a marker) is "# name (empty)". A random id
// (volatileID) that occurs once in the case is written "<id>"; one that occurs more often (a
// span's parent, a model call an observation links to) "<id-N>", numbered by first appearance.
func goldenText(t *testing.T, files []goldenFile) []byte {
	t.Helper()
	slices.SortFunc(files, func(a, b goldenFile) int { return cmp.Compare(a.name, b.name) })
	lines := make([][][]byte, len(files))
	isID := map[string]bool{}
	for i, f := range files {
		text, _ := bytes.CutSuffix(f.content, []byte("\n"))
		if len(f.content) == 0 {
			continue
		}
		for _, line := range bytes.Split(text, []byte("\n")) {
			w := &lineWalker{dec: jsontext.NewDecoder(bytes.NewReader(line), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)), line: line}
			if err := w.value(""); err == nil {
				for _, id := range w.ids {
					isID[strconv.Quote(id)] = true
				}
				line = applyEdits(t, line, w.edits)
			} else if !errors.Is(err, io.EOF) {
				line = slices.Concat([]byte("# not JSON: "), line) // a damaged line, kept as it is
			}
			lines[i] = append(lines[i], line)
		}
	}

	count := map[string]int{}
	for _, ls := range lines {
		for _, l := range ls {
			for _, m := range hexString.FindAll(l, -1) {
				if isID[string(m)] {
					count[string(m)]++
				}
			}
		}
	}
	placeholder := map[string][]byte{}
	for _, ls := range lines {
		for j, l := range ls {
			ls[j] = hexString.ReplaceAllFunc(l, func(m []byte) []byte {
				n := count[string(m)]
				switch {
				case n == 0:
					return m // not a volatile id (e.g. a trace id derived from the rollout id)
				case n == 1:
					return []byte(`"<id>"`)
				}
				p, ok := placeholder[string(m)]
				if !ok {
					p = fmt.Appendf(nil, `"<id-%d>"`, len(placeholder)+1)
					placeholder[string(m)] = p
				}
				return p
			})
		}
	}

	var out bytes.Buffer
	for i, f := range files {
		if len(f.content) == 0 {
			fmt.Fprintf(&out, "# %s (empty)\n", f.name)
			continue
		}
		fmt.Fprintf(&out, "# %s\n", f.name)
		for j := 0; j < len(lines[i]); {
			k := j + 1
			for k < len(lines[i]) && bytes.Equal(lines[i][k], lines[i][j]) {
				k++
			}
			out.Write(lines[i][j])
			out.WriteByte('\n')
			if k-j > 1 {
				fmt.Fprintf(&out, "# %d more like the line above\n", k-j-1)
			}
			j = k
		}
		if !bytes.HasSuffix(f.content, []byte("\n")) {
			out.WriteString("# (no newline at the end of the file)\n")
		}
	}
	return out.Bytes()
}

// applyEdits returns line with the edits (in ascending order, not overlapping) applied.
func applyEdits(t *testing.T, line []byte, edits []edit) []byte {
	t.Helper()
	var out []byte
	prev := 0
	for _, e := range edits {
		require.GreaterOrEqual(t, e.start, prev, "overlapping golden edits in %s", line)
		out = append(out, line[prev:e.start]...)
		out = append(out, e.text...)
		prev = e.end
	}
	return append(out, line[prev:]...)
}

// readGoldenFiles returns the files of dir whose names start with prefix.
func readGoldenFiles(t *testing.T, dir, prefix string) []goldenFile {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var files []goldenFile
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			files = append(files, goldenFile{e.Name(), b})
		}
	}
	return files
}

// checkGolden compares the golden text of files with testdata/golden/<name>.golden, or rewrites
// it with -update.
func checkGolden(t *testing.T, name string, files []goldenFile) {
	t.Helper()
	require.NotEmpty(t, files, "no files for golden %s", name)
	got := goldenText(t, files)
	path := filepath.Join("testdata", "golden", name+".golden")
	if *updateGolden {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cmd/gymtrace -run 'TestConformance$|TestDemoCmdDefaults' -update to create it")
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; ; i++ {
		if i >= len(gl) || i >= len(wl) || !bytes.Equal(gl[i], wl[i]) {
			g, w := lineAt(gl, i), lineAt(wl, i)
			d := 0
			for d < len(g) && d < len(w) && g[d] == w[d] {
				d++
			}
			t.Errorf("%s differs from the golden at line %d, byte %d (a non-volatile byte changed, or volatileFields misses a field; -update rewrites it after review)\n got: …%s…\nwant: …%s…",
				path, i+1, d+1, around(g, d), around(w, d))
			return
		}
	}
}

func lineAt(lines [][]byte, i int) []byte {
	if i >= len(lines) {
		return []byte("(end of file)")
	}
	return lines[i]
}

// around returns the bytes of l within 120 of offset d.
func around(l []byte, d int) string {
	return string(l[max(0, d-120):min(len(l), d+120)])
}

func TestGoldenText(t *testing.T) {
	const (
		a = "0123456789abcdef0123456789abcdef" // a model-call id
		b = "00000000000000aa"                 // a span id, referenced by another line
		c = "00000000000000bb"                 // a span id nothing references
		r = "fedcba9876543210fedcba9876543210" // a trace id: not volatile
	)
	files := []goldenFile{
		{"x.observations.jsonl", []byte(
			`{"span_id":"` + c + `","parent_span_id":"` + b + `","start_time_unix_nano":1,"attributes":{"gymtrace.sandbox.peak_memory_mib":1.5,"k":"v","gymtrace.sandbox.peak_memory_mib":2}}` + "\n" +
				`{"span_id":"` + b + `","trace_id":"` + r + `","attributes":{"gymtrace.model_call.ids":["` + a + `"]},"events":[{"time_unix_nano":5,"n":1}]}` + "\n")},
		{"x.capture.jsonl", []byte(
			`{"model_call_id":"` + a + `","started_at":1.5,"latency_ttft_ms":null,"request":{"started_at":2}}` + "\n" +
				`{"request":{"gymtrace_test":{"writer":1,"seq":2}}}` + "\n" +
				`{"request":{"gymtrace_test":{"writer":3,"seq":4}}}` + "\n" +
				"{torn\n" +
				"\n" +
				`{"span_id":null}`)},
		{"x.capture.incomplete", nil},
	}
	want := "# x.capture.incomplete (empty)\n" +
		"# x.capture.jsonl\n" +
		`{"model_call_id":"<id-1>","started_at":"<volatile>","latency_ttft_ms":null,"request":{"started_at":2}}` + "\n" +
		`{"request":{"gymtrace_test":{"writer":"<volatile>","seq":"<volatile>"}}}` + "\n" +
		"# 1 more like the line above\n" +
		"# not JSON: {torn\n" +
		"\n" +
		`{"span_id":null}` + "\n" +
		"# (no newline at the end of the file)\n" +
		"# x.observations.jsonl\n" +
		`{"span_id":"<id>","parent_span_id":"<id-2>","start_time_unix_nano":"<volatile>","attributes":{"k":"v"}}` + "\n" +
		`{"span_id":"<id-2>","trace_id":"` + r + `","attributes":{"gymtrace.model_call.ids":["<id-1>"]},"events":[{"time_unix_nano":"<volatile>","n":1}]}` + "\n"
	require.Equal(t, want, string(goldenText(t, files)))
}
