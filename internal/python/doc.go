// Package python reproduces the few Python built-ins whose results the reference's output depends
// on, over the ordered JSON value of package ojson: json.loads ([Loads]), repr() and str()
// ([ReprStr], [Repr], [Str]), json.dumps(v, ensure_ascii=False, sort_keys=True) ([Dumps]),
// truthiness ([Truthy]), type(v).__name__ ([TypeName]), int() ([Int]), str.isspace(), str.strip()
// and str.lower() ([IsSpace], [Strip], [Lower]) and datetime.fromisoformat(s).timestamp()
// ([ISOTimestamp]).
//
// gymtrace quotes user-supplied text in error messages whose wording is the reference's Python text
// (SPEC §2.2 rollout-id ValueError; SPEC §1.2 explicit-id ValueError and the int() conversion of the
// attempt index), reads configuration with Python's truthiness (SPEC §1.4), parses tool-call
// arguments as json.loads does (SPEC §3.6) and writes the Python text and timestamps of transcript
// values (SPEC §6.4 "Helpers"), so each result must match CPython byte for byte. capture/, proxy/ and
// agentobs/claudecode all use this one package so that they cannot drift.
//
// Values are those [Loads] returns: integers keep their exact text, floats carry orjson's text
// (the capture writes them so, SPEC §0 D6) and [Repr], [Str] and [Dumps] write them as Python's
// repr ([ReprFloat]); duplicate keys are collapsed as a dict holds them. The package imports only the standard library and package ojson.
//
// Pure functions: safe for concurrent use.
package python
