package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// RedactedText replaces every value a [Redactor] removes: a JSON value selected by a path becomes
// the JSON string "[REDACTED]", and each match of a pattern becomes the text [REDACTED].
const RedactedText = "[REDACTED]"

// Redactor removes configured parts of the captured payloads of every call — request, response,
// request_raw and response_raw — before they are put on the model-call span, so neither the span
// (nor anything exported from it) nor the capture file ever holds them (DESIGN.md "Security"). The
// client and the upstream are never affected: they exchange the exact bytes as before.
//
// Two kinds of rules, both optional:
//
//   - JSON paths select values inside JSON payloads: the request and response objects, a raw
//     payload that is a whole JSON text, and the JSON of every SSE "data:" line of response_raw.
//     Each selected value (of any type) is replaced by the string "[REDACTED]", so the payload stays
//     valid JSON with its key order, duplicate keys and number text; a payload nothing matched is
//     kept byte for byte (SPEC §0 D6). Grammar: "$" followed by one or more segments:
//     ".name" (a member; the name is any text without '.', '[' or ']'), `["name"]` (a member named
//     by a JSON string literal, for names with those characters), ".*" (every member), "[N]"
//     (element N of an array, from 0), "[*]" (every element) and "..name" (the member name at any
//     depth below). Examples: "$.metadata.user_id", "$.messages[*].content", "$..api_key".
//     A raw text (or data line) that is JSON only as Python's json.loads reads it (NaN, integers
//     beyond 64 bits, ...) is redacted as that reading; one that starts like JSON but that no
//     reading parses is replaced whole by [RedactedText] when a path may select in it (withheld).
//     A leading UTF-8 byte order mark is read past and kept. A raw text whose body was UTF-16 or
//     UTF-32 (json.loads reads such bytes) is withheld whole when any rule or credential would
//     change its ASCII reading, and kept otherwise.
//   - Regular expressions (Go RE2 syntax, package regexp) are applied to every JSON string value
//     (member names are not changed) and, line by line, to the lines of raw payloads that are not
//     JSON (for example an HTML error page, or SSE lines other than JSON data lines); each match is
//     replaced by [REDACTED].
//
// A handler also replaces the request's own credentials, literally and before the patterns
// ([WithCredentialRedaction], on by default), with or without a Redactor.
//
// Limits: a secret split across two SSE deltas matches no pattern in response_raw (the reassembled
// response joins and redacts it); patterns only see decoded strings, so they cannot break JSON.
// Derived span attributes (model, usage, [WithMessageContent]) come from the redacted payloads. A
// Redactor is immutable and safe for concurrent use.
type Redactor struct {
	paths    [][]pathSegment
	patterns []*regexp.Regexp
	secrets  []string // one call's credential values, longest first (credentials.go)
}

// NewRedactor compiles jsonPaths (grammar in [Redactor]) and patterns (Go RE2 regular expressions);
// either may be empty, but not both. The error names the first invalid path or pattern and the rule
// it breaks: a path that does not start with "$", has no segment, an empty or unterminated segment,
// or a bad index; a pattern that does not compile or matches the empty string (which would insert
// [REDACTED] everywhere).
func NewRedactor(jsonPaths, patterns []string) (*Redactor, error) {
	if len(jsonPaths) == 0 && len(patterns) == 0 {
		return nil, errors.New("proxy redactor: no JSON path and no pattern given")
	}
	r := &Redactor{}
	for _, p := range jsonPaths {
		segs, err := parseJSONPath(p)
		if err != nil {
			return nil, fmt.Errorf("proxy redactor: JSON path %q: %w", p, err)
		}
		r.paths = append(r.paths, segs)
	}
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("proxy redactor: pattern %q: %w", p, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("proxy redactor: pattern %q matches the empty string: it must match at least one character", p)
		}
		r.patterns = append(r.patterns, re)
	}
	return r, nil
}

// WithRedaction makes the handler redact every captured payload with r before it reaches the span
// and the capture file (see [Redactor]). Default none: payloads are captured whole. A nil r keeps
// the default.
func WithRedaction(r *Redactor) Option {
	return optionFunc(func(c *config) { c.redactor = r })
}

// withSecrets returns r extended by one call's credential values (replaced literally, before the
// patterns, so a pattern never leaves part of one); r itself when there are none. r may be nil.
func (r *Redactor) withSecrets(secrets []string) *Redactor {
	if len(secrets) == 0 {
		return r
	}
	out := &Redactor{}
	if r != nil {
		*out = *r
	}
	out.secrets = slices.SortedStableFunc(slices.Values(secrets), func(a, b string) int { return len(b) - len(a) })
	return out
}

// redactExchange redacts ex's payloads in place. A nil r does nothing.
func (r *Redactor) redactExchange(ex *capture.Exchange) {
	if r == nil {
		return
	}
	ex.Request = r.redactObject(ex.Request)
	ex.Response = r.redactObject(ex.Response)
	ex.RequestRaw = r.redactRaw(ex.RequestRaw)
	ex.ResponseRaw = r.redactRaw(ex.ResponseRaw)
}

// redactObject redacts a payload stored as a JSON object, kept as it is when nothing matched.
func (r *Redactor) redactObject(obj json.RawMessage) json.RawMessage {
	if len(obj) == 0 || !r.mayMatch(func(s string) bool { return bytes.Contains(obj, []byte(s)) }) {
		return obj
	}
	if out, _, changed := r.redactJSON(obj); changed {
		return out
	}
	return obj
}

// redactJSON parses text as strict JSON (SPEC §0 D6) and redacts it; out is set when changed. A
// text that strict JSON refuses but Python's json.loads reads (NaN, Infinity, integers beyond 64
// bits, numbers beyond D6's ranges, nesting beyond PayloadMaxDepth: JSON to the client that sent
// it) is redacted as Python reads it; when something is replaced, it is written back from that
// reading (python.Loads: NaN and Infinity as null, floats as orjson writes them).
func (r *Redactor) redactJSON(text []byte) (out []byte, isJSON, changed bool) {
	v, err := ojson.ParseDepth(text, capture.PayloadMaxDepth)
	if err != nil {
		if v, err = python.Loads(text); err != nil {
			return nil, false, false
		}
	}
	for _, segs := range r.paths {
		var c bool
		v, c = applyPath(v, segs)
		changed = changed || c
	}
	if len(r.patterns) > 0 || len(r.secrets) > 0 {
		var c bool
		v, c = r.redactStrings(v)
		changed = changed || c
	}
	if !changed {
		return nil, true, false
	}
	return v.AppendJSON(make([]byte, 0, len(text))), true, true
}

// redactRaw redacts a raw payload text: as JSON when it is a whole JSON text, else line by line
// (SSE JSON data lines as JSON, every other line by the secrets and the patterns).
func (r *Redactor) redactRaw(raw *string) *string {
	if raw == nil || *raw == "" {
		return raw
	}
	if narrow, ok := wideView(*raw); ok && r.redactRaw(&narrow) != &narrow {
		// The paths, patterns and credentials cannot be applied to UTF-16 or UTF-32 text in
		// place; the whole text is withheld when they would change its ASCII reading.
		withheld := RedactedText
		return &withheld
	}
	if !r.mayMatch(func(s string) bool { return strings.Contains(*raw, s) }) {
		return raw
	}
	if out, handled, changed := r.redactJSONText(*raw); handled {
		if !changed {
			return raw
		}
		return &out
	}
	var b strings.Builder
	changed := false
	for rest := *raw; rest != ""; {
		seg, n := dataGroup(rest)
		red, handled, c := "", false, false
		if n > 1 {
			// One event's data over several lines: its JSON is their join, as a stream reader
			// reads it (SPEC §4.3), so the paths and escapes are applied to the join.
			red, handled, c = r.redactEvent(seg)
		} else {
			line, eol := splitLine(rest)
			seg = rest[:len(line)+len(eol)]
		}
		if !handled {
			red, c = r.redactLines(seg)
		}
		b.WriteString(red)
		changed = changed || c
		rest = rest[len(seg):]
	}
	if !changed {
		return raw
	}
	s := b.String()
	return &s
}

// redactLines redacts s line by line (redactLine), keeping the line terminators.
func (r *Redactor) redactLines(s string) (string, bool) {
	var b strings.Builder
	changed := false
	for rest := s; rest != ""; {
		line, eol := splitLine(rest)
		rest = rest[len(line)+len(eol):]
		if red, ok := r.redactLine(line); ok {
			line, changed = red, true
		}
		b.WriteString(line)
		b.WriteString(eol)
	}
	return b.String(), changed
}

// dataGroup returns the run of consecutive "data:" lines that s starts with (terminators
// included) and how many lines it has; 0 when s does not start with one.
func dataGroup(s string) (group string, n int) {
	end := 0
	for strings.HasPrefix(s[end:], "data:") {
		line, eol := splitLine(s[end:])
		end += len(line) + len(eol)
		n++
	}
	return s[:end], n
}

// dataValue returns the value of an SSE "data:" line: the text after the field name and its one
// optional space (sp), as SSE reads it (SPEC §0 D2); ok is false for any other line.
func dataValue(line string) (sp, data string, ok bool) {
	data, ok = strings.CutPrefix(line, "data:")
	if ok && strings.HasPrefix(data, " ") {
		sp, data = " ", data[1:]
	}
	return sp, data, ok
}

// redactEvent redacts the data lines of one SSE event (group, terminators included) as the JSON
// of their join: redacted, they become one data line; a join that is JSON nothing matched keeps
// the lines; a join no reading parses that must be withheld becomes one "data: [REDACTED]" line.
// handled is false when the lines are to be read one by one (the join is no JSON).
func (r *Redactor) redactEvent(group string) (out string, handled, changed bool) {
	var parts []string
	eol := ""
	for rest := group; rest != ""; {
		line, e := splitLine(rest)
		rest = rest[len(line)+len(e):]
		_, data, _ := dataValue(line)
		parts = append(parts, data)
		eol = e
	}
	red, handled, changed := r.redactJSONText(strings.Join(parts, "\n"))
	if !changed {
		return group, handled, false
	}
	return "data: " + red + eol, true, true
}

// redactJSONText redacts text as JSON (redactJSON), or withholds it whole (withheld): out is the
// text to write in its place (text itself when nothing changed). handled is false when text is no
// JSON and is not withheld: the caller reads it as plain text.
func (r *Redactor) redactJSONText(text string) (out string, handled, changed bool) {
	// A UTF-8 byte order mark is read past, as json.loads reads a body's bytes; it stays in place.
	bom, body := "", text
	if t, ok := strings.CutPrefix(text, byteOrderMark); ok {
		bom, body = byteOrderMark, t
	}
	switch red, isJSON, c := r.redactJSON([]byte(body)); {
	case c:
		return bom + string(red), true, true
	case isJSON:
		return text, true, false
	case r.withheld(body):
		return RedactedText, true, true
	}
	return text, false, false
}

// byteOrderMark is U+FEFF as UTF-8.
const byteOrderMark = "\uFEFF"

// wideView returns the ASCII reading of a raw text whose body was UTF-16 or UTF-32 (json.loads
// reads such bytes, telling them by a NUL among the first four bytes, json.detect_encoding): the
// text without its NULs and without the replacement characters or byte order mark its leading
// byte order mark became when it was decoded as UTF-8. ok is false for any other text (a UTF-8 JSON
// text never has a NUL there).
func wideView(text string) (narrow string, ok bool) {
	rest := text
	for {
		t, cut := strings.CutPrefix(rest, "\uFFFD")
		if !cut {
			t, cut = strings.CutPrefix(rest, byteOrderMark)
		}
		if !cut {
			break
		}
		rest = t
	}
	if i := strings.IndexByte(rest, 0); i < 0 || i >= 4 {
		return "", false
	}
	return strings.ReplaceAll(rest, "\x00", ""), true
}

// splitLine returns the first line of s and its terminator (CRLF, LF, CR or "" at the end), the
// line ends of SSE (SPEC §0 D2).
func splitLine(s string) (line, eol string) {
	i := strings.IndexAny(s, "\r\n")
	switch {
	case i < 0:
		return s, ""
	case s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n':
		return s[:i], "\r\n"
	default:
		return s[:i], s[i : i+1]
	}
}

// redactLine redacts one line of a raw payload: the JSON of an SSE "data:" line, else the patterns
// on the whole line. ok is false when nothing changed.
func (r *Redactor) redactLine(line string) (string, bool) {
	if sp, data, ok := dataValue(line); ok {
		if out, handled, changed := r.redactJSONText(data); handled {
			if !changed {
				return line, false
			}
			return "data:" + sp + out, true
		}
	}
	return r.redactText(line)
}

// withheld reports whether a raw text (or an SSE data line's text) that no JSON reading parses
// must be replaced whole: it starts like JSON (a '{' or '[' after whitespace; not "[DONE]"), and
// either it holds a JSON escape that could spell one of the call's credentials, or one of r's
// JSON paths may select something in it — a path naming no member, or a member name the text
// holds (or may hold behind a `\` escape). The paths cannot be applied to such a text, nor the
// escapes read, and what they would remove must not reach the file.
func (r *Redactor) withheld(text string) bool {
	if len(r.paths) == 0 && len(r.secrets) == 0 {
		return false
	}
	if t := strings.TrimSpace(text); t == "" || (t[0] != '{' && t[0] != '[') || t == "[DONE]" {
		return false // [DONE] is the Chat stream's end, no JSON
	}
	if r.secretMayBeEscaped(text) {
		return true // a credential may hide behind a JSON escape the line-by-line search cannot read
	}
	escaped := strings.Contains(text, `\`)
	for _, segs := range r.paths {
		named := false
		for _, sg := range segs {
			if sg.kind == segMember || sg.kind == segDescend {
				named = true
				if escaped || strings.Contains(text, sg.name) {
					return true
				}
			}
		}
		if !named {
			return true
		}
	}
	return false
}

// secretMayBeEscaped reports whether text holds a JSON escape that could spell one of r's secrets.
func (r *Redactor) secretMayBeEscaped(text string) bool {
	contains := func(s string) bool { return strings.Contains(text, s) }
	for _, sec := range r.secrets {
		if escapeMaySpell(sec, contains) {
			return true
		}
	}
	return false
}

// escapeMaySpell reports whether a text, searched by contains, holds a JSON escape that could spell
// part of sec: `\u00`, `\u` for a secret beyond ASCII, any `\` for a secret with a character JSON
// may escape.
func escapeMaySpell(sec string, contains func(string) bool) bool {
	return contains(`\u00`) ||
		(strings.ContainsFunc(sec, func(c rune) bool { return c >= utf8.RuneSelf }) && contains(`\u`)) ||
		(strings.ContainsFunc(sec, jsonMayEscape) && contains(`\`))
}

// mayMatch reports whether a text, searched by contains, may hold something r replaces: always
// with a path or a pattern; with only secrets, when one appears as it is or the text holds a JSON
// escape that could spell one (`\u00`, `\u` for a secret beyond ASCII, any `\` for a secret with a
// character JSON may escape). It spares a parse to the calls whose payloads hold no credential.
func (r *Redactor) mayMatch(contains func(string) bool) bool {
	if len(r.paths) > 0 || len(r.patterns) > 0 {
		return true
	}
	for _, sec := range r.secrets {
		if contains(sec) || escapeMaySpell(sec, contains) {
			return true
		}
	}
	return false
}

// jsonMayEscape reports whether a JSON encoder may write c as an escape other than \u: '"', '\',
// '/' and the control characters.
func jsonMayEscape(c rune) bool { return c < 0x20 || c == '"' || c == '\\' || c == '/' }

// redactText replaces every secret, then every match of every pattern, in s.
func (r *Redactor) redactText(s string) (string, bool) {
	changed := false
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, RedactedText)
			changed = true
		}
	}
	for _, re := range r.patterns {
		if re.MatchString(s) {
			s = re.ReplaceAllLiteralString(s, RedactedText)
			changed = true
		}
	}
	return s, changed
}

// redactStrings applies the patterns to every string value under v.
func (r *Redactor) redactStrings(v ojson.Value) (ojson.Value, bool) {
	if s, ok := v.AsString(); ok {
		if out, changed := r.redactText(s); changed {
			return ojson.String(out), true
		}
		return v, false
	}
	changed := false
	eachChild(v, func(_ string, _ int, child *ojson.Value) {
		var c bool
		*child, c = r.redactStrings(*child)
		changed = changed || c
	})
	return v, changed
}

// eachChild calls f with a pointer into v's own memory (assigning through it edits v in place) for
// every array element (key "", i its index) and every object member value (its key, i -1).
func eachChild(v ojson.Value, f func(key string, i int, child *ojson.Value)) {
	elems, members := v.Elems(), v.Members()
	for i := range elems {
		f("", i, &elems[i])
	}
	for i := range members {
		f(members[i].Key, -1, &members[i].Value)
	}
}

// pathSegment is one step of a compiled JSON path.
type pathSegment struct {
	kind  segmentKind
	name  string // segMember, segDescend
	index int    // segIndex
}

type segmentKind uint8

const (
	segMember    segmentKind = iota // .name or ["name"]
	segAnyMember                    // .*
	segIndex                        // [N]
	segAnyIndex                     // [*]
	segDescend                      // ..name
)

// parseJSONPath compiles one path of the [Redactor] grammar.
func parseJSONPath(p string) ([]pathSegment, error) {
	rest, ok := strings.CutPrefix(p, "$")
	if !ok {
		return nil, errors.New(`must start with "$"`)
	}
	var segs []pathSegment
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, ".."):
			name, n := memberName(rest[2:])
			if name == "" {
				return nil, errors.New(`".." must be followed by a member name`)
			}
			segs = append(segs, pathSegment{kind: segDescend, name: name})
			rest = rest[2+n:]
		case rest[0] == '.':
			name, n := memberName(rest[1:])
			switch name {
			case "":
				return nil, errors.New(`"." must be followed by a member name or "*"`)
			case "*":
				segs = append(segs, pathSegment{kind: segAnyMember})
			default:
				segs = append(segs, pathSegment{kind: segMember, name: name})
			}
			rest = rest[1+n:]
		case rest[0] == '[':
			seg, n, err := bracketSegment(rest)
			if err != nil {
				return nil, err
			}
			segs = append(segs, seg)
			rest = rest[n:]
		default:
			return nil, fmt.Errorf(`unexpected %q: segments start with ".", ".." or "["`, rest[:1])
		}
	}
	if len(segs) == 0 {
		return nil, errors.New(`needs at least one segment after "$" (a payload must stay a JSON object)`)
	}
	return segs, nil
}

// memberName returns the member name at the start of s (up to '.', '[' or ']') and its length.
func memberName(s string) (string, int) {
	i := strings.IndexAny(s, ".[]")
	if i < 0 {
		i = len(s)
	}
	return s[:i], i
}

// bracketSegment parses "[N]", "[*]" or `["name"]` at the start of s and returns its length.
func bracketSegment(s string) (pathSegment, int, error) {
	if strings.HasPrefix(s, `["`) {
		// The JSON string literal ends at the first unescaped quote.
		for i := 2; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				if i+1 >= len(s) || s[i+1] != ']' {
					return pathSegment{}, 0, errors.New(`a quoted member name must be followed by "]"`)
				}
				var name string
				if err := json.Unmarshal([]byte(s[1:i+1]), &name); err != nil {
					return pathSegment{}, 0, fmt.Errorf("member name %s: %w", s[1:i+1], err)
				}
				return pathSegment{kind: segMember, name: name}, i + 2, nil
			}
		}
		return pathSegment{}, 0, errors.New("unterminated quoted member name")
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return pathSegment{}, 0, errors.New(`unterminated "["`)
	}
	inner := s[1:end]
	if inner == "*" {
		return pathSegment{kind: segAnyIndex}, end + 1, nil
	}
	n, err := strconv.Atoi(inner)
	if err != nil || n < 0 || inner != strconv.Itoa(n) {
		return pathSegment{}, 0, fmt.Errorf(`index %q must be "*" or a non-negative decimal integer`, inner)
	}
	return pathSegment{kind: segIndex, index: n}, end + 1, nil
}

// redacted is the value a path-selected value becomes.
var redacted = ojson.String(RedactedText)

// applyPath replaces every value of v that segs selects with [RedactedText] and reports whether
// anything was replaced. v's arrays and members are changed in place.
func applyPath(v ojson.Value, segs []pathSegment) (ojson.Value, bool) {
	if len(segs) == 0 {
		return redacted, true
	}
	seg, rest := segs[0], segs[1:]
	changed := false
	apply := func(child *ojson.Value, segs []pathSegment) {
		var c bool
		*child, c = applyPath(*child, segs)
		changed = changed || c
	}
	eachChild(v, func(key string, i int, child *ojson.Value) {
		member := i < 0
		switch {
		case seg.kind == segDescend:
			apply(child, segs) // deeper occurrences first
			if member && key == seg.name {
				apply(child, rest)
			}
		case seg.kind == segAnyMember && member, seg.kind == segMember && member && key == seg.name,
			seg.kind == segAnyIndex && !member, seg.kind == segIndex && i == seg.index:
			apply(child, rest)
		}
	})
	return v, changed
}
