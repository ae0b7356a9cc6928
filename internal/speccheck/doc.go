// Package speccheck keeps the repository's citations of its format specification resolvable: every
// "SPEC §N.M", deviation "Dn", item "§8 #N" and named paragraph `§0 "Spans"` written in a .go or .md
// file must name something docs/SPEC.md has. It holds only a test (go test ./internal/speccheck).
package speccheck
