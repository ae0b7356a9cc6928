package capturedir

import "slices"

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
			if ca < cb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	switch {
	case len(a)-i < len(b)-j:
		return -1
	case len(a)-i > len(b)-j:
		return 1
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareDigits compares two runs of ASCII digits by numeric value, without overflow.
func compareDigits(x, y string) int {
	for len(x) > 1 && x[0] == '0' {
		x = x[1:]
	}
	for len(y) > 1 && y[0] == '0' {
		y = y[1:]
	}
	if len(x) != len(y) {
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// SortIDs sorts ids in place by [Compare].
func SortIDs(ids []string) { slices.SortFunc(ids, Compare) }
