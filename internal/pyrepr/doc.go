// Package pyrepr renders Go strings and floats the way Python's repr() renders a str and a float.
//
// gymtrace quotes user-supplied text in error messages whose wording is the reference's Python
// text (SPEC §2.2 rollout-id ValueError, SPEC §1.1 explicit ids, the int() conversions of §3),
// so the quoting must match CPython 3.11 byte for byte. [Float] is Python's repr of a float, for
// the places the reference formats a number with str() or json.dumps (rollout ids from indices,
// SPEC §1.2; Claude Code texts, §6.4); JSON the capture writes uses ojson.AppendFloat instead
// (orjson's float text, SPEC §0 D6). It is shared by capture/, sdk/ and agentobs/ so they cannot
// drift. Pure functions: safe for concurrent use.
package pyrepr
