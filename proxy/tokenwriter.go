package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gymtrace/gymtrace/internal/growbuf"
	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/sdk/stream"
)

// tokenWriter sits between the handler and the captureWriter of a call whose request the proxy
// added token members to (docs/TOKENS.md §0 T2): it keeps the upstream's own answer for the token
// capture and passes on the answer the client would have received for its own request, the
// injected members restored. A non-streamed JSON answer is held whole and sent, edited, with its
// new Content-Length when the handler is done (finish); an SSE answer is edited event by event,
// each event passed on as soon as it is complete. Any other answer (an error status, another
// content type or encoding) passes through unedited. An answer that passes the capture bound, or
// the smaller token answer bound, while held is passed on from then on as received, unedited (SPEC
// §0 D15 wins over holding).
type tokenWriter struct {
	next    http.ResponseWriter // the captureWriter
	restore restoreRules
	dialect string // stream.DialectChat or stream.DialectResponses
	limit   int64  // the most bytes held: the capture bound, or the token answer bound when smaller
	unread  bool   // restore.unread(): the upstream's reassembly may read events as edited
	// answerBound: limit is the token answer bound (WithMaxTokenAnswerBytes), which only token
	// capture has; the capture record goes on to the capture bound.
	answerBound bool

	mode        int
	status      int
	wroteHeader bool
	original    []byte // a held JSON answer, as received
	declared    int64  // its Content-Length, at most limit (0: none)
	pending     []byte // SSE: the bytes of the event not yet complete
	out         []byte // SSE: the edited events of one Write, reused (the next writer keeps no reference)
	sse         bool
	sc          *stream.Capture // SSE: the reassembly of the upstream's own events
	acc         stream.TokenAccumulator
	scratch     editScratch // SSE: the edit's memory, reused from event to event
	bound       bool        // the held answer passed the capture bound
	editErr     error       // the answer could not be edited: the client got it unedited
}

const (
	twPass = iota // passed through unread
	twHold        // a JSON answer held whole for its edit
	twCopy        // a JSON answer nothing was injected into: passed through read by read, a copy kept
	twSSE         // an SSE answer edited event by event
)

// newTokenWriter returns the editor of a call whose capture keeps at most limit response bytes
// and whose token capture reads an answer of at most answerLimit bytes.
func newTokenWriter(next http.ResponseWriter, restore restoreRules, dialect string, limit, answerLimit int64) *tokenWriter {
	tw := &tokenWriter{next: next, restore: restore, dialect: dialect, limit: limit, unread: restore.unread()}
	if answerLimit > 0 && answerLimit < limit {
		tw.limit, tw.answerBound = answerLimit, true
	}
	return tw
}

// Header returns the client's header map (shared with the captureWriter).
func (tw *tokenWriter) Header() http.Header { return tw.next.Header() }

// Unwrap returns the captureWriter (for http.ResponseController).
func (tw *tokenWriter) Unwrap() http.ResponseWriter { return tw.next }

// WriteHeader decides how the answer is edited from its status and headers.
func (tw *tokenWriter) WriteHeader(code int) {
	if tw.wroteHeader {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		tw.next.WriteHeader(code)
		return
	}
	tw.wroteHeader, tw.status = true, code
	h := tw.next.Header()
	ce := strings.TrimSpace(h.Get("Content-Encoding"))
	ct := h.Get("Content-Type")
	switch {
	case code < 200 || code > 299 || (ce != "" && !strings.EqualFold(ce, "identity")):
		tw.mode = twPass
		if ce != "" && code >= 200 && code <= 299 {
			tw.editErr = fmt.Errorf("the upstream answered with Content-Encoding %q although the proxy asked for identity", ce)
		}
	case strings.HasPrefix(ct, "text/event-stream"):
		tw.mode, tw.sse = twSSE, true
		tw.sc, _ = stream.NewCapture(tw.dialect)
		h.Del("Content-Length") // the events change length
	case strings.Contains(ct, "json") && !tw.restore.empty():
		tw.mode = twHold
		tw.preallocate(h)
		return
	case strings.Contains(ct, "json"):
		tw.mode = twCopy
		tw.preallocate(h)
	default:
		tw.mode = twPass
	}
	tw.next.WriteHeader(code)
}

// preallocate sizes the buffer of a held answer from its Content-Length, as the captureWriter
// sizes its own (at most rawPreallocMax up front, then doubling: growbuf), so that an answer of
// hundreds of MiB is not copied a dozen times while it arrives.
func (tw *tokenWriter) preallocate(h http.Header) {
	if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil && n > 0 {
		tw.declared = min(n, tw.limit)
		tw.original = make([]byte, 0, min(n, rawPreallocMax, tw.limit))
	}
}

// hold appends p to the held answer, growing toward its declared Content-Length
// (growbuf.AppendToward), so that the answer is held in one buffer of its size.
func (tw *tokenWriter) hold(p []byte) {
	tw.original = growbuf.AppendToward(tw.original, p, int(tw.declared))
}

// Write passes p on (edited, held or as it is, see tokenWriter).
func (tw *tokenWriter) Write(p []byte) (int, error) {
	if !tw.wroteHeader {
		if tw.next.Header().Get("Content-Type") == "" && len(p) > 0 {
			tw.next.Header().Set("Content-Type", http.DetectContentType(p))
		}
		tw.WriteHeader(http.StatusOK)
	}
	switch tw.mode {
	case twHold:
		if int64(len(tw.original))+int64(len(p)) <= tw.limit {
			tw.hold(p)
			return len(p), nil
		}
		// Past the bound: what was held, then p, passed on as received; the held bytes are
		// never read again, their memory is free while the rest passes.
		tw.bound = true
		tw.mode = twPass
		tw.next.WriteHeader(tw.status)
		held := tw.original
		tw.original = nil
		if len(held) > 0 {
			if _, err := tw.next.Write(held); err != nil {
				return 0, err
			}
		}
	case twCopy:
		if !tw.bound {
			if int64(len(tw.original))+int64(len(p)) > tw.limit {
				tw.bound, tw.original = true, nil
			} else {
				tw.hold(p)
			}
		}
	case twSSE:
		tw.pending = append(tw.pending, p...)
		out, rest := tw.editEvents(tw.out[:0], tw.pending)
		tw.pending = append(tw.pending[:0], rest...)
		if int64(len(tw.pending)) > tw.limit {
			tw.bound = true
			tw.mode = twPass
			tw.feedUpstream(tw.pending)
			out = append(out, tw.pending...)
			tw.pending = nil
		}
		tw.out = keepBuffer(out)
		if len(out) > 0 {
			if _, err := tw.next.Write(out); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	return tw.next.Write(p)
}

// Flush flushes what was passed on; a held answer waits for finish.
func (tw *tokenWriter) Flush() {
	if tw.mode == twHold {
		return
	}
	if f, ok := tw.next.(http.Flusher); ok {
		f.Flush()
	}
}

// finish passes on what is still held once the handler is done: the edited JSON answer with its
// new Content-Length (clean), or the rest of an SSE answer's last, incomplete event as received.
// The body of an answer cut by a broken exchange (not clean) is not passed on, only its status and
// headers: the client's response aborts.
func (tw *tokenWriter) finish(clean bool) {
	switch tw.mode {
	case twHold:
		if !clean {
			// The held body is not passed on, but its status and headers are, as the plain path
			// passes them before the break (README "What a fault costs": the record keeps the
			// status seen); the Content-Length is the extended answer's, never sent.
			tw.next.Header().Del("Content-Length")
			tw.next.WriteHeader(tw.status)
			return
		}
		out, err := editAnswer(tw.original, tw.restore)
		if err != nil {
			tw.editErr, out = err, tw.original
		}
		tw.next.Header().Set("Content-Length", strconv.Itoa(len(out)))
		tw.next.WriteHeader(tw.status)
		_, _ = tw.next.Write(out)
	case twSSE:
		if len(tw.pending) > 0 {
			tw.feedUpstream(tw.pending)
			_, _ = tw.next.Write(tw.pending)
			tw.pending = nil
		}
	}
}

// feedUpstream feeds b, the next bytes of the upstream's stream as it was sent or with some events
// edited as editEvents says, to the reassembly of the upstream's own answer (tw.sc).
func (tw *tokenWriter) feedUpstream(b []byte) {
	if tw.sc != nil {
		tw.sc.Feed(b)
	}
}

// editEvents appends to dst the complete events at the start of buf, edited, and returns dst and
// the rest of buf. Each event is also fed to the upstream's reassembly, as received or as edited.
func (tw *tokenWriter) editEvents(dst, buf []byte) (out, rest []byte) {
	start := 0
	for i := 0; i < len(buf); {
		nl := bytes.IndexByte(buf[i:], '\n')
		if nl < 0 {
			break
		}
		line := buf[i : i+nl]
		i += nl + 1
		if len(line) == 0 || (len(line) == 1 && line[0] == '\r') {
			// The upstream's reassembly gets the event as edited when the edit is one the
			// reassembly cannot see (editEvent), else as received.
			ev, at := buf[start:i], len(dst)
			var edited bool
			dst, edited = tw.editEvent(dst, ev)
			if edited {
				tw.feedUpstream(dst[at:])
			} else {
				tw.feedUpstream(ev)
			}
			start = i
		}
	}
	return dst, buf[start:]
}

// editEvent appends to dst one complete SSE event (its lines and the blank line that ends it),
// edited: the event's data (its data lines joined, as SSE reads it) is fed to the token
// accumulator and its injected members restored; a dropped event appends nothing.
//
// invisible reports that what it appended is the event edited in a way the upstream's chat
// reassembly (SPEC §4.5, sdk/stream) cannot tell from the event as received, so that the
// reassembly may read the shorter edited event instead: a strict JSON object whose edits set to
// null or remove only the restore rules' members (prompt_token_ids, logprobs, token_ids — never
// read by the reassembly, which reads model, id, usage and the choices' index, finish_reason and
// delta), in an event without any CR, so that its lines split the same under the SSE rules (a
// lone CR ends a line there and may sit in JSON whitespace, where an edit could remove it).
func (tw *tokenWriter) editEvent(dst, ev []byte) (out []byte, invisible bool) {
	dst, invisible = tw.editEventTo(dst, ev)
	return dst, invisible && tw.unread && bytes.IndexByte(ev, '\r') < 0
}

// The members the chat reassembly reads (SPEC §4.5): of a chunk, and of each of its choices.
var (
	reassemblyChunkMembers  = []string{"model", "id", "usage", "choices"}
	reassemblyChoiceMembers = []string{"index", "finish_reason", "delta"}
)

// unread reports that no member the rules edit is one the chat reassembly reads (SPEC §4.5). A
// Responses restore edits the response object the reassembly keeps, whose token members the
// payload reads: never.
func (r restoreRules) unread() bool {
	if r.responses.any() {
		return false
	}
	for _, n := range append(r.topNull[:len(r.topNull):len(r.topNull)], r.topRemove...) {
		if slices.Contains(reassemblyChunkMembers, n) {
			return false
		}
	}
	for _, n := range append(r.choiceNull[:len(r.choiceNull):len(r.choiceNull)], r.choiceRemove...) {
		if slices.Contains(reassemblyChoiceMembers, n) {
			return false
		}
	}
	return true
}

// editEventTo is editEvent without the CR rule.
func (tw *tokenWriter) editEventTo(dst, ev []byte) ([]byte, bool) {
	var one [1]dataLine
	lines := eventDataLines(ev, one[:0])
	if len(lines) == 0 {
		return append(dst, ev...), false
	}
	// The event's data (SSE: its data lines' values joined by LF); a join point can only fall in
	// JSON whitespace, so the edits below never add or move one inside a token.
	data := ev[lines[0].start:lines[0].end]
	if len(lines) > 1 {
		data = joinData(ev, lines)
	}
	if len(data) == 0 || data[0] != '{' {
		tw.feedTokens(data)
		return append(dst, ev...), false
	}
	// One validating pass over the data serves the accumulator, the empty-delta test and the
	// edit (docs/TOKENS.md §0 T2, T3).
	if v, err := ojson.ParseLazy(data); err == nil && v.Kind() == ojson.KindObject {
		var edits []byteEdit
		if tw.dialect == stream.DialectResponses {
			edits = responsesEventEdits(data, v, tw.restore.responses)
		} else {
			tw.acc.FeedObject(v)
			if tw.restore.dropEmptyDelta && emptyDelta(v) {
				return dst, false
			}
			edits = parsedEdits(data, v, tw.restore, &tw.scratch)
		}
		if len(edits) == 0 {
			return append(dst, ev...), false
		}
		if len(lines) == 1 { // the common case, edited in place
			dst = append(dst, ev[:lines[0].start]...)
			dst = applyEdits(dst, data, edits)
			return append(dst, ev[lines[0].end:]...), true
		}
		return putData(dst, ev, lines, applyEdits(nil, data, edits)), true
	}
	// Not strict JSON: read as json.loads reads it (readAnswer: NaN, -Infinity, integers beyond 64
	// bits), as the reference would, so the accumulator refuses what breaks the entry's rules
	// (docs/TOKENS.md §0 T7) instead of reporting the chunk as no object; the lenient edit may
	// still restore the client's view.
	if tw.dialect == stream.DialectChat {
		if v, err := readAnswer(data); err == nil && v.Kind() == ojson.KindObject {
			tw.acc.FeedObject(v)
		} else {
			tw.acc.Feed(data)
		}
	}
	edited, err := editAnswer(data, tw.restore)
	if err != nil {
		if tw.editErr == nil {
			tw.editErr = err
		}
		return append(dst, ev...), false
	}
	return putData(dst, ev, lines, edited), false
}

// feedTokens feeds an event's data to the chat token accumulator (a Responses answer's ids are
// read from its response object instead).
func (tw *tokenWriter) feedTokens(data []byte) {
	if tw.dialect == stream.DialectChat {
		tw.acc.Feed(data)
	}
}

// dataLine is where one "data:" line's value sits in its event: ev[start:end], after the field
// name and one optional space, before the line end.
type dataLine struct{ start, end int }

// eventDataLines appends to dst the data lines of the event ev, in order.
func eventDataLines(ev []byte, dst []dataLine) []dataLine {
	off := 0
	for line := range bytes.SplitAfterSeq(ev, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("data:")) {
			v := sseData(line)
			start := off + len("data:")
			if len(line) > len("data:") && line[len("data:")] == ' ' {
				start++
			}
			dst = append(dst, dataLine{start: start, end: start + len(v)})
		}
		off += len(line)
	}
	return dst
}

// joinData is the data of an event with more than one data line: their values joined by LF.
func joinData(ev []byte, lines []dataLine) []byte {
	var joined []byte
	for i, l := range lines {
		if i > 0 {
			joined = append(joined, '\n')
		}
		joined = append(joined, ev[l.start:l.end]...)
	}
	return joined
}

// putData appends ev to dst with its data replaced by data (the join of its data lines' values,
// edited): data's LF-separated pieces take the place of the event's data lines' values in order,
// each line keeping its field name, space and line end; data lines left without a piece (an edit
// removed the whitespace that held their join point) are left out. Every other line is kept in
// place.
func putData(dst, ev []byte, lines []dataLine, data []byte) []byte {
	at := 0
	for i, l := range lines {
		piece, rest, more := bytes.Cut(data, []byte("\n"))
		if i == len(lines)-1 {
			piece, more = data, false // the edits add no LF: the last line takes what is left
		}
		lineStart := bytes.LastIndexByte(ev[:l.start], '\n') + 1
		lineEnd := len(ev)
		if nl := bytes.IndexByte(ev[l.end:], '\n'); nl >= 0 {
			lineEnd = l.end + nl + 1
		}
		dst = append(dst, ev[at:lineStart]...)
		if data != nil {
			dst = append(dst, ev[lineStart:l.start]...)
			dst = append(dst, piece...)
			dst = append(dst, ev[l.end:lineEnd]...)
		}
		at = lineEnd
		if data = rest; !more {
			data = nil
		}
	}
	return append(dst, ev[at:]...)
}

// emptyDeltaChunk reports a chat chunk with one choice whose delta is empty and that has no
// finish_reason and no usage. A delta is empty when it has no member other than nulls: vLLM's
// DeltaMessage() for a held-back token dumps as {} in releases before the reasoning rename and as
// {"reasoning_content":null} after it (its validator assigns reasoning_content from reasoning, and
// an assigned member counts as set for exclude_unset). Data that is not a JSON object is not such
// a chunk.
func emptyDeltaChunk(data []byte) bool {
	v, err := ojson.ParseLazy(data)
	return err == nil && emptyDelta(v)
}

// The members emptyDelta reads of a chunk and of its choice.
var (
	emptyDeltaKeys       = []string{"usage", "choices"}
	emptyDeltaChoiceKeys = []string{"delta", "finish_reason"}
)

// emptyDelta is emptyDeltaChunk of the parsed data v; duplicate members read as Python reads them
// (the last one), except that every member of the delta counts.
func emptyDelta(v ojson.Value) bool {
	if v.Kind() != ojson.KindObject {
		return false
	}
	var top [2]ojson.Value
	var topOK [2]bool
	v.GetEach(emptyDeltaKeys, top[:], topOK[:]) // one scan of the top level
	if u := top[0]; topOK[0] && !u.IsNull() {
		return false
	}
	cs := top[1]
	var c ojson.Value
	n := 0
	for e := range cs.Elements() {
		if n++; n > 1 {
			return false
		}
		c = e
	}
	if n != 1 {
		return false
	}
	var m [2]ojson.Value
	var mOK [2]bool
	c.GetEach(emptyDeltaChoiceKeys, m[:], mOK[:])
	d, f := m[0], m[1]
	if d.Kind() != ojson.KindObject || !f.IsNull() {
		return false
	}
	for m := range d.Spans() {
		if !m.Value.IsNull() {
			return false
		}
	}
	return true
}

// sseData is the value of a "data:" line: after the field name and one optional space, without
// the line end.
func sseData(line []byte) []byte {
	d := bytes.TrimPrefix(line, []byte("data:"))
	d = bytes.TrimPrefix(d, []byte(" "))
	d = bytes.TrimSuffix(d, []byte("\n"))
	return bytes.TrimSuffix(d, []byte("\r"))
}

// editAnswer applies the restore rules to a JSON answer (docs/TOKENS.md §0 T2): top-level and
// per-choice members set back to null or removed, every other byte kept. Strict JSON (SPEC §0 D6)
// is read in one validating pass ([ojson.ParseLazy]); other text goes to editLenient. The
// non-finite float literals that Python's json.dumps writes (NaN, -Infinity: a log prob, say) are
// read past in a copy that masks them with numbers of the same length (maskNonFinite), so the
// edits found there apply to b as they stand. An answer that is not a JSON object is an error.
func editAnswer(b []byte, r restoreRules) ([]byte, error) {
	if r.empty() {
		return b, nil
	}
	scan := b // the text the members are found in: b, or b with its literals masked
	v, err := ojson.ParseLazy(b)
	if err != nil {
		if masked, found := maskNonFinite(b); found {
			scan = masked
			v, err = ojson.ParseLazy(scan)
		}
	}
	if err != nil && r.responses.any() {
		return nil, fmt.Errorf("a Responses answer that is not strict JSON cannot be restored: %w", err)
	}
	if err != nil {
		return editLenient(b, scan, r)
	}
	if v.Kind() != ojson.KindObject {
		return nil, errors.New("the answer is not a JSON object")
	}
	var edits []byteEdit
	if r.responses.any() {
		edits = sortEdits(responseObjectEdits(nil, scan, v, len(scan)-len(bytes.TrimLeft(scan, " \t\r\n")), r.responses))
	} else {
		edits = parsedEdits(scan, v, r, nil)
	}
	if len(edits) == 0 {
		return b, nil
	}
	return applyEdits(make([]byte, 0, len(b)), b, edits), nil
}

// byteEdit replaces b[start:end] with repl.
type byteEdit struct {
	start, end int
	repl       string
}

// editScratch is the memory one edit works in, kept by a tokenWriter from one event to the next
// (the zero value is ready; not safe for concurrent use).
type editScratch struct {
	spans []memberSpan
	edits []byteEdit
}

// parsedEdits returns the edits that apply r to b, whose [ojson.ParseLazy] reading is v, a JSON
// object (none when nothing changes): every member the rules name, duplicates included, at the top
// and in each object of the first "choices" member that is an array. The result lives in sc
// (reused by the next call; nil: a fresh one).
func parsedEdits(b []byte, v ojson.Value, r restoreRules, sc *editScratch) []byteEdit {
	if sc == nil {
		sc = &editScratch{}
	}
	base := len(b) - len(bytes.TrimLeft(b, " \t\r\n")) // where v's text starts in b
	spans := sc.spans[:0]
	var choices ojson.Value // the first "choices" member that is an array
	choicesAt := -1
	for sp := range v.Spans() {
		spans = append(spans, memberSpan{name: sp.Key, keyStart: base + sp.KeyStart, valStart: base + sp.Start, valEnd: base + sp.End})
		if choicesAt < 0 && sp.Key == "choices" && sp.Value.Kind() == ojson.KindArray {
			choices, choicesAt = sp.Value, base+sp.Start
		}
	}
	edits := memberEdits(sc.edits[:0], spans, r.topNull, r.topRemove)
	if choicesAt >= 0 && len(r.choiceNull)+len(r.choiceRemove) > 0 {
		for e := range choices.Spans() {
			if e.Value.Kind() == ojson.KindObject {
				spans = appendMemberSpans(spans[:0], e.Value, choicesAt+e.Start)
				edits = memberEdits(edits, spans, r.choiceNull, r.choiceRemove)
			}
		}
	}
	clear(spans) // no names kept alive
	sc.spans, sc.edits = spans[:0], edits
	return sortEdits(edits)
}

// applyEdits appends b with edits (sorted, not overlapping) applied to dst.
func applyEdits(dst, b []byte, edits []byteEdit) []byte {
	at := 0
	for _, e := range edits {
		dst = append(dst, b[at:e.start]...)
		dst = append(dst, e.repl...)
		at = e.end
	}
	return append(dst, b[at:]...)
}

// keepBuffer returns b emptied for reuse, or nil when it grew past 1 MiB (an event that large is
// rare; its memory is not kept for the rest of the stream).
func keepBuffer(b []byte) []byte {
	if cap(b) > 1<<20 {
		return nil
	}
	return b[:0]
}

// appendMemberSpans appends the members of the raw object o, whose text starts at b[base], with
// their offsets in b.
func appendMemberSpans(ms []memberSpan, o ojson.Value, base int) []memberSpan {
	for sp := range o.Spans() {
		ms = append(ms, memberSpan{name: sp.Key, keyStart: base + sp.KeyStart, valStart: base + sp.Start, valEnd: base + sp.End})
	}
	return ms
}

// editLenient is the restore of text that strict JSON refuses (invalid UTF-8, text after the
// object, an integer beyond 64 bits): the members found by a lenient reading of the object at the
// start of scan (jsontext, invalid UTF-8 and duplicate names allowed) are edited in b as
// parsedEdits edits them. scan is b, or b with its non-finite float literals masked
// (maskNonFinite: the same offsets).
func editLenient(b, scan []byte, r restoreRules) ([]byte, error) {
	top, err := scanTopObject(scan)
	if err != nil {
		return nil, err
	}
	var edits []byteEdit
	edits = memberEdits(edits, top, r.topNull, r.topRemove)
	for _, m := range top {
		if m.name != "choices" || scan[m.valStart] != '[' {
			continue
		}
		els, err := scanArray(scan, m.valStart)
		if err != nil {
			return nil, err
		}
		for _, e := range els {
			if scan[e] != '{' {
				continue
			}
			ms, err := scanObject(scan, e)
			if err != nil {
				return nil, err
			}
			edits = memberEdits(edits, ms, r.choiceNull, r.choiceRemove)
		}
		break
	}
	if len(edits) == 0 {
		return b, nil
	}
	out := make([]byte, 0, len(b))
	at := 0
	for _, e := range sortEdits(edits) {
		out = append(out, b[at:e.start]...)
		out = append(out, e.repl...)
		at = e.end
	}
	return append(out, b[at:]...), nil
}

// scanTopObject returns the members of the object at the start of scan (after whitespace), read
// leniently ([scanObject]: jsontext, invalid UTF-8 and duplicate names allowed; what follows the
// object is not read).
func scanTopObject(scan []byte) ([]memberSpan, error) {
	start := bytes.IndexByte(scan, '{')
	if start < 0 || len(bytes.TrimSpace(scan[:start])) > 0 {
		return nil, errors.New("the answer is not a JSON object")
	}
	return scanObject(scan, start)
}

// memberEdits appends to edits the edits that set the members named in toNull to null and remove
// those in toRemove, with the commas between members kept right. Ranges never overlap: a removed
// member takes the separator before it, except a leading run of removed members, which goes up to
// the first member kept.
func memberEdits(edits []byteEdit, ms []memberSpan, toNull, toRemove []string) []byteEdit {
	lead := 0 // the leading run of removed members
	for lead < len(ms) && contains(toRemove, ms[lead].name) {
		lead++
	}
	switch {
	case lead == len(ms) && lead > 0:
		return append(edits, byteEdit{ms[0].keyStart, ms[lead-1].valEnd, ""})
	case lead > 0:
		edits = append(edits, byteEdit{ms[0].keyStart, ms[lead].keyStart, ""})
	}
	for i := lead; i < len(ms); i++ {
		m := ms[i]
		switch {
		case contains(toRemove, m.name):
			edits = append(edits, byteEdit{ms[i-1].valEnd, m.valEnd, ""})
		case contains(toNull, m.name):
			edits = append(edits, byteEdit{m.valStart, m.valEnd, "null"})
		}
	}
	return edits
}

func contains(names []string, s string) bool {
	for _, n := range names {
		if n == s {
			return true
		}
	}
	return false
}

// sortEdits orders non-overlapping edits by position (few: insertion sort).
func sortEdits(es []byteEdit) []byteEdit {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].start < es[j-1].start; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
	return es
}

// memberSpan is where one object member lies in the text: its name's opening quote and its
// value's bytes.
type memberSpan struct {
	name             string
	keyStart         int
	valStart, valEnd int
}

func jsonDecoder(b []byte) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
}

// scanObject returns the members of the JSON object that starts at b[at].
func scanObject(b []byte, at int) ([]memberSpan, error) {
	dec := jsonDecoder(b[at:])
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("not a JSON object")
	}
	var ms []memberSpan
	for {
		switch dec.PeekKind() {
		case '}':
			return ms, nil
		case '"':
		default:
			return nil, errors.New("malformed JSON object")
		}
		k, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		keyEnd := int(dec.InputOffset())
		name, err := jsontext.AppendUnquote(nil, k)
		if err != nil {
			return nil, err
		}
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		ms = append(ms, memberSpan{name: string(name), keyStart: at + keyEnd - len(k), valStart: at + end - len(v), valEnd: at + end})
	}
}

// scanArray returns the start offsets of the elements of the JSON array that starts at b[at].
func scanArray(b []byte, at int) ([]int, error) {
	dec := jsonDecoder(b[at:])
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, errors.New("not a JSON array")
	}
	var starts []int
	for {
		switch dec.PeekKind() {
		case ']':
			return starts, nil
		case 0:
			return nil, errors.New("malformed JSON array")
		}
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		starts = append(starts, at+int(dec.InputOffset())-len(v))
	}
}
