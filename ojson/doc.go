// Package ojson is gymtrace's ordered JSON: a small value type that keeps object key order and
// duplicate keys exactly as sent, and keeps every number as its original text.
//
// It exists because the capture format (SPEC.md §3.1, §0 D6 and D9) stores request and response
// payloads as the sender's own JSON text and writes everything the capture builds itself the way
// Python's orjson does (compact, nothing HTML-escaped, non-ASCII and U+2028/U+2029 raw). Go's
// encoding/json can do neither: maps lose order and float64 loses number text.
//
// Three readers are provided:
//
//   - [Parse]: strict RFC 8259 (SPEC §0 D6): UTF-8 only, no byte order mark, no NaN/Infinity,
//     integers within the signed or unsigned 64-bit range, finite floats, nesting at most
//     [MaxDepth], no lone surrogate escapes, nothing after the value but whitespace.
//   - [Compact]: the same validation, producing the input with only insignificant whitespace
//     removed (key order, duplicates, number text and escapes as sent). It reads with jsontext
//     (github.com/go-json-experiment/json/jsontext), adding the nesting limit and the number
//     ranges jsontext does not check.
//   - [ParsePython]: Python json.loads semantics, for the few places the reference parses text
//     and re-serializes it (SPEC §3.6 tool-call arguments): NaN/Infinity accepted (they become
//     null, as orjson writes them), floats re-written as orjson writes them ([AppendFloat]),
//     integers of any size kept exact, duplicate keys collapsed (first position, last value). It
//     lives here because it is a mode of the one parser; gymtrace itself calls it as
//     internal/python.Loads, next to the other Python built-ins.
//
// [ParseLazy] is [Parse]'s reading (duplicates collapsed) without a tree: it validates with
// [Valid]'s jsontext pass and keeps arrays and objects as their text, read where a caller asks
// ([Value.Get], [Value.Pick], [Value.Elements]) and handed out whole when already encoded
// ([Value.EncodedText]), so reading a few fields of a large document costs only those fields (the
// capture readers, #14). [PythonText] is [ParsePython]'s reading re-encoded the same way.
//
// A [Walker] is [Compact]'s jsontext pass that also reports the outer members and elements to a
// [Visitor] on the way, so a caller collects what it needs from a body in the same walk (capture's
// payload facts). One compaction engine serves both; the fuzzers hold it to [Parse]'s verdict and
// to encoding/json's Compact bytes.
//
// For hot paths: [Valid] checks like [Parse] without building anything; [CompactString] compacts
// text held in a string without copying it first; a [Parser] parses like [Parse] into memory it
// reuses from one document to the next (one SSE event after another), so that the caller must
// [Value.Clone] what it keeps.
//
// One writer, [Value.AppendJSON] / [AppendString] / [AppendFloat], encodes like orjson.
//
// Values are plain data: safe for concurrent reads, not for concurrent mutation via [Value.Set].
package ojson
