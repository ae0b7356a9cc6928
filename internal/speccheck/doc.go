// Package speccheck keeps the repository's citations of its specifications resolvable: every
// "SPEC §N.M", deviation "Dn", item "§8 #N" and named paragraph `§0 "Spans"` written in a .go or .md
// file must name something docs/SPEC.md has, and every "TOKENS.md §N.M" something docs/TOKENS.md
// has (in docs/TOKENS.md itself and in package tokens a bare "§N.M" is TOKENS.md's). It holds only a
// test (go test ./internal/speccheck). Every `DESIGN.md "<section>"` must name a heading of
// docs/DESIGN.md.
package speccheck
