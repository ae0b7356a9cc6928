// Package pyrepr renders Go strings the way Python's repr() renders a str.
//
// gymtrace quotes user-supplied text in error messages whose wording is the reference's Python
// text (SPEC §2.2 rollout-id ValueError, SPEC §1.1 explicit ids, the int() conversions of §3),
// so the quoting must match CPython 3.11 byte for byte. It is shared by capture/ and sdk/ so the
// two cannot drift. Pure functions: safe for concurrent use.
package pyrepr
