package ojson

import "unsafe"

// compactWhole reports whether src is one strict JSON value (SPEC §0 D6) that is already compact —
// no whitespace between tokens — and nested at most maxDepth deep: then [compactText] would copy src
// unchanged, and a caller may take src's own bytes. It answers in two light passes instead of
// compactText's token-by-token read: a byte scan for whitespace, nesting and the number ranges,
// then jsontext's whole-value read (RFC 8259 and UTF-8); together they take about 0.6 of the token
// read's time on a record payload (BenchmarkCompactCompact). false is no verdict: src may be
// invalid, spaced, too deep, or hold a number to check exactly; the caller then runs compactText,
// which gives the answer and the error.
func compactWhole(src []byte, maxDepth int) bool {
	if !scanCompact(unsafe.String(unsafe.SliceData(src), len(src)), maxDepth) {
		return false
	}
	r := getReader(src)
	defer putReader(r)
	if _, err := r.dec.ReadValue(); err != nil {
		return false
	}
	return int(r.dec.InputOffset()) == len(src)
}

// scanCompact is compactWhole's byte scan: false at the first whitespace outside a string, a
// container nested deeper than maxDepth, or a number [numberInRange] cannot vouch for. String
// texts are skipped to their closing quote ([stringEnd]); whether they are valid is jsontext's
// part. On text that is no JSON at all the scan may say true: only the whole-value read after it
// decides.
func scanCompact(src string, maxDepth int) bool {
	depth := 0
	for i := 0; i < len(src); {
		switch c := src[i]; c {
		case '"':
			i = stringEnd(src, i)
		case '{', '[':
			if depth++; depth > maxDepth {
				return false
			}
			i++
		case '}', ']':
			depth--
			i++
		case ' ', '\t', '\n', '\r':
			return false
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			end, ok := numberInRange(src, i)
			if !ok {
				return false
			}
			i = end
		default:
			i++
		}
	}
	return true
}

// numberInRange reads the number starting at s[i] and returns the index after it, with true when
// its text alone shows it within SPEC §0 D6's ranges: an integer of at most 18 characters (within
// int64), or a fraction or exponent form of at most 100 characters whose exponent has at most two
// digits (its magnitude is then below 1e200, far from float64's overflow). false leaves the number
// to [numberRangeError]'s exact check.
func numberInRange(s string, i int) (end int, ok bool) {
	start := i
	digits := func() {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	i++ // the sign or the first digit
	digits()
	float := false
	if i < len(s) && s[i] == '.' {
		float = true
		i++
		digits()
	}
	expDigits := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		float = true
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		at := i
		digits()
		expDigits = i - at
	}
	if !float {
		return i, i-start <= 18
	}
	return i, i-start <= 100 && expDigits <= 2
}
