// Package pyrepr renders Go strings the way Python's repr() renders a str.
//
// gymtrace quotes user-supplied text in error messages whose wording is the reference's Python
// text (SPEC §2.2 rollout-id ValueError; SPEC §1.2 explicit-id ValueError and the int() conversion
// of the attempt index) and in the Python text of transcript values (SPEC §6.4 "Helpers"), so the
// quoting must match CPython 3.11 byte for byte. It is shared by capture/, sdk/ and
// agentobs/claudecode so they cannot drift. Pure functions: safe for concurrent use.
package pyrepr
