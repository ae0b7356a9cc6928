package python

import "github.com/gymtrace/gymtrace/ojson"

// Loads reads data the way Python's json.loads reads a str: surrounding whitespace allowed; NaN,
// Infinity and -Infinity accepted and returned as null (orjson writes them so, SPEC §0 D6); floats
// re-written as orjson writes them ("1.50" → 1.5, "1e2" → 100.0, "1e16" → 1e16, overflow → null);
// integers of any size kept exact ("-0" → 0); duplicate keys collapsed as a dict holds them (first
// position, last value); lone surrogate escapes and invalid UTF-8 read as U+FFFD; raw control
// characters in strings rejected (strict=True); nesting limited to [ojson.MaxDepth]. Errors are
// *ojson.SyntaxError.
//
// The parser itself is ojson's (its Python mode shares the scanner of the strict one); this is the
// entry every caller that wants Python's reading uses.
func Loads(data []byte) (ojson.Value, error) { return ojson.ParsePython(data) }

// LoadsText returns the JSON text of json.loads(s) as orjson writes it, what Loads(s).AppendJSON
// writes, building no tree when s is strict JSON ([ojson.PythonText]): s's own bytes (never
// modify them) when s already is that text, else a new buffer. Errors are Loads's.
func LoadsText(s string) ([]byte, error) { return ojson.PythonText(s) }

// LoadsNonFinite is [Loads] except that a non-finite float keeps being one, as json.loads reads it:
// NaN, Infinity, -Infinity and a float beyond the float64 range (1e400) are numbers whose text is
// "NaN", "Infinity" or "-Infinity" ([ojson.Value.Float64] reads them), not null. For reading
// only: such a number is no RFC 8259 text ([ojson.ParsePythonNonFinite]).
func LoadsNonFinite(data []byte) (ojson.Value, error) { return ojson.ParsePythonNonFinite(data) }
