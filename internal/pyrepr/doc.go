// Package pyrepr gives Python's repr(), str() and int() of strings and of json.loads values
// ([ojson.ParsePython]).
//
// gymtrace quotes user-supplied text in error messages whose wording is the reference's Python
// text (SPEC §2.2 rollout-id ValueError, SPEC §1.1 explicit ids, the int() conversions of §3),
// so the quoting must match CPython 3.11 byte for byte; the rollout-id rules of SPEC §1.2 need
// Python's str() and int() of JSON values. It is shared by capture/ and rollout/ so they cannot
// drift. Pure functions: safe for concurrent use.
package pyrepr
