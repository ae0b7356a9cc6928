// Package pyrepr is what remains of the repr() helper that moved to internal/python; it forwards
// to it until its last importer (sdk/, which another change of issue #13 rewrites) moves too.
//
// Deprecated: use [python.ReprStr].
package pyrepr

import "github.com/gymtrace/gymtrace/internal/python"

// Str returns Python's repr() of the str s, quotes included.
//
// Deprecated: use [python.ReprStr].
func Str(s string) string { return python.ReprStr(s) }

// Float returns Python's repr() of the float f.
//
// Deprecated: use [python.ReprFloat].
func Float(f float64) string { return python.ReprFloat(f) }
