package capturedir

import (
	"cmp"
	"strings"
)

// Compare orders rollout ids the way people read them: runs of ASCII digits compare as numbers
// ("2-0" < "10-0"), everything else byte by byte; ids that compare equal that way (e.g. "1-01" and
// "1-1") fall back to plain byte order, so the order is total and deterministic. It returns a
// negative number when a sorts first, 0 only when a == b.
func Compare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			if c := compareDigits(a[si:i], b[sj:j]); c != 0 {
				return c
			}
			continue
		}
		if ca != cb {
			return cmp.Compare(ca, cb)
		}
		i++
		j++
	}
	return cmp.Or(cmp.Compare(len(a)-i, len(b)-j), strings.Compare(a, b))
}

// compareDigits compares two runs of ASCII digits by numeric value, without overflow.
func compareDigits(x, y string) int {
	x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
	return cmp.Or(cmp.Compare(len(x), len(y)), strings.Compare(x, y))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
