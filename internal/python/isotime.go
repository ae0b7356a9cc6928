package python

import (
	"math/big"
	"time"
	"unicode/utf8"
)

// ISOTimestamp returns datetime.fromisoformat(s).timestamp() as CPython 3.13's C implementation
// computes it, in seconds since the Unix epoch, and false where fromisoformat, the datetime
// constructor or timestamp() raises. Every form CPython 3.13 accepts is read (calendar and ISO-week
// dates, basic and extended formats, "," or "." fractions of any length cut to microseconds, "Z"
// and ±hh[:mm[:ss[.ffffff]]] offsets). A value with an offset gives its exact microseconds / 10^6
// correctly rounded; a naive one (no offset) is read as wall-clock time in loc, as Python reads it
// in the machine's local zone (SPEC §9 #14): fold 0, the earlier instant of a repeated hour, and
// time.Local when loc is nil.
//
// The parser works on the UTF-8 bytes of s exactly as the C code does, including its reading of a
// NUL byte past the end of the string as a terminator (so an embedded U+0000 ends a component).
// The result is always finite.
func ISOTimestamp(s string, loc *time.Location) (float64, bool) {
	if utf8.RuneCountInString(s) < 7 {
		return 0, false
	}
	p := isoParser{b: []byte(s)}
	d, ok := p.parse()
	if !ok {
		return 0, false
	}
	return d.timestamp(loc)
}

// isoDateTime holds the components fromisoformat produced, before range checks.
type isoDateTime struct {
	year, month, day             int
	hour, minute, second, micro  int
	hasTZ                        bool
	tzOffsetSeconds, tzOffsetMic int // signed
}

// isoParser mirrors the C parser's pointer walk over a NUL-terminated buffer.
type isoParser struct{ b []byte }

// at returns the byte at i, or NUL past the end (the C string's terminator and beyond).
func (p *isoParser) at(i int) byte {
	if i >= 0 && i < len(p.b) {
		return p.b[i]
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digits parses n ASCII digits at i into *v (accumulating as the C code does) and returns the
// position after them, or -1.
func (p *isoParser) digits(i int, v *int, n int) int {
	for k := 0; k < n; k++ {
		c := p.at(i)
		i++
		if !isDigit(c) {
			return -1
		}
		*v = *v*10 + int(c-'0')
	}
	return i
}

// separator is _find_isoformat_datetime_separator: the byte index of the date/time separator.
func (p *isoParser) separator() int {
	n := len(p.b)
	if n == 7 {
		return 7
	}
	if p.at(4) == '-' {
		if p.at(5) == 'W' {
			if n < 8 {
				return -1
			}
			if n > 8 && p.at(8) == '-' {
				if n == 9 {
					return -1
				}
				if n > 10 && isDigit(p.at(10)) {
					return 8
				}
				return 10
			}
			return 8
		}
		return 10
	}
	if p.at(4) == 'W' {
		idx := 7
		for ; idx < n; idx++ {
			if !isDigit(p.at(idx)) {
				break
			}
		}
		if idx < 9 {
			return idx
		}
		if idx%2 == 0 {
			return 7
		}
		return 8
	}
	return 8
}

// date is parse_isoformat_date over the first n bytes; ok false on any failure.
func (p *isoParser) date(n int, d *isoDateTime) bool {
	i := p.digits(0, &d.year, 4)
	if i < 0 {
		return false
	}
	sep := p.at(i) == '-'
	if sep {
		i++
	}
	if p.at(i) == 'W' {
		i++
		week, day := 0, 0
		if i = p.digits(i, &week, 2); i < 0 {
			return false
		}
		if i < n {
			if sep {
				c := p.at(i)
				i++
				if c != '-' {
					return false
				}
			}
			if i = p.digits(i, &day, 1); i < 0 {
				return false
			}
		} else {
			day = 1
		}
		y, m, dd, ok := isoWeekToDate(d.year, week, day)
		if !ok {
			return false
		}
		d.year, d.month, d.day = y, m, dd
		return true
	}
	if i = p.digits(i, &d.month, 2); i < 0 {
		return false
	}
	if sep {
		c := p.at(i)
		i++
		if c != '-' {
			return false
		}
	}
	return p.digits(i, &d.day, 2) >= 0
}

// hhmmssff is parse_hh_mm_ss_ff over [start, end): it returns the C return code (negative on
// failure, 1 when the component did not end at a NUL, 0 otherwise).
func (p *isoParser) hhmmssff(start, end int, vals *[4]int) int {
	*vals = [4]int{}
	i := start
	hasSep := true
	for k := 0; k < 3; k++ {
		if i = p.digits(i, &vals[k], 2); i < 0 {
			return -3
		}
		c := p.at(i)
		i++
		if k == 0 {
			hasSep = c == ':'
		}
		switch {
		case i >= end:
			if c != 0 {
				return 1
			}
			return 0
		case hasSep && c == ':':
			// CPython 3.13 accepts a ':' after the seconds as the fraction separator, and a
			// fraction after the hours or minutes ("10.5"): both were tightened only later.
			continue
		case c == '.' || c == ',':
		case !hasSep:
			i--
			continue
		default:
			return -4
		}
		break
	}
	toParse := end - i
	if toParse >= 6 {
		toParse = 6
	}
	if i = p.digits(i, &vals[3], toParse); i < 0 {
		return -3
	}
	if toParse < 6 {
		vals[3] *= [...]int{100000, 10000, 1000, 100, 10}[toParse-1]
	}
	for isDigit(p.at(i)) {
		i++
	}
	if p.at(i) != 0 {
		return 1
	}
	return 0
}

// time is parse_isoformat_time over [start, start+n): ok false on failure.
func (p *isoParser) time(start, n int, d *isoDateTime) bool {
	end := start + n
	tz := start
	for {
		if c := p.at(tz); c == 'Z' || c == '+' || c == '-' {
			break
		}
		tz++
		if tz >= end {
			break
		}
	}
	var vals [4]int
	rv := p.hhmmssff(start, tz, &vals)
	d.hour, d.minute, d.second, d.micro = vals[0], vals[1], vals[2], vals[3]
	if rv < 0 {
		return false
	}
	if tz == end {
		return rv != 1
	}
	d.hasTZ = true
	if p.at(tz) == 'Z' {
		return p.at(tz+1) == 0
	}
	sign := 1
	if p.at(tz) == '-' {
		sign = -1
	}
	var tzv [4]int
	rv = p.hhmmssff(tz+1, end, &tzv)
	d.tzOffsetSeconds = sign * (tzv[0]*3600 + tzv[1]*60 + tzv[2])
	d.tzOffsetMic = sign * tzv[3]
	return rv == 0
}

// parse is datetime_fromisoformat up to the constructor's range checks (done in timestamp).
func (p *isoParser) parse() (isoDateTime, bool) {
	var d isoDateTime
	n := len(p.b)
	sep := p.separator()
	if sep < 0 || !p.date(sep, &d) {
		return d, false
	}
	if n > sep {
		i := sep
		switch c := p.at(i); {
		case c&0x80 == 0:
			i++
		case c&0xf0 == 0xe0:
			i += 3
		case c&0xf0 == 0xf0:
			i += 4
		default:
			i += 2
		}
		if !p.time(i, n-i, &d) {
			return d, false
		}
	}
	return d, true
}

// daysFromCivil returns the number of days from 1970-01-01 to y-m-d (proleptic Gregorian, as
// Python's date; Go's time package counts the same calendar).
func daysFromCivil(y, m, d int) int64 {
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	y, mm, d := time.Unix(z*86400, 0).UTC().Date()
	return y, int(mm), d
}

func isLeap(y int) bool { return daysIn(y, 2) == 29 }

// daysIn returns the number of days of month m of year y.
func daysIn(y, m int) int { return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day() }

// isoWeekToDate is iso_to_ymd: ISO year/week/weekday to a calendar date (the result's year may
// fall outside 1..9999; the datetime constructor rejects it later).
func isoWeekToDate(year, week, day int) (int, int, int, bool) {
	if year < 1 || year > 9999 {
		return 0, 0, 0, false
	}
	jan1 := daysFromCivil(year, 1, 1)
	// Python's ordinal: 0001-01-01 is 1, a Monday; ordinal % 7 is 0 on Sundays.
	ordinal := jan1 - daysFromCivil(1, 1, 1) + 1
	if week <= 0 || week >= 53 {
		wd := ordinal % 7
		if !(week == 53 && (wd == 4 || (wd == 3 && isLeap(year)))) {
			return 0, 0, 0, false
		}
	}
	if day <= 0 || day >= 8 {
		return 0, 0, 0, false
	}
	weekday := (ordinal + 6) % 7 // Monday = 0
	monday := jan1 - weekday
	if weekday > 3 {
		monday += 7
	}
	y, m, d := civilFromDays(monday + int64((week-1)*7+day-1))
	return y, m, d, true
}

// timestamp applies the datetime constructor's range checks and timezone construction, then
// .timestamp(): aware values as exact microseconds / 10^6 correctly rounded (Python's int true
// division), naive ones as local seconds (in loc) plus microseconds / 1e6 (C's double arithmetic).
func (d isoDateTime) timestamp(loc *time.Location) (float64, bool) {
	if d.year < 1 || d.year > 9999 || d.month < 1 || d.month > 12 || d.day < 1 || d.day > daysIn(d.year, d.month) ||
		d.hour > 23 || d.minute > 59 || d.second > 59 || d.micro > 999999 {
		return 0, false
	}
	if !d.hasTZ {
		if loc == nil {
			loc = time.Local
		}
		secs, ok := localToSeconds(d, loc)
		if !ok {
			return 0, false
		}
		return float64(secs-epochSeconds) + float64(d.micro)/1e6, true
	}
	offset := int64(d.tzOffsetSeconds)*1_000_000 + int64(d.tzOffsetMic)
	const day = int64(86400) * 1_000_000
	if offset <= -day || offset >= day {
		return 0, false // timezone(): offset must be strictly between -24h and 24h
	}
	us := daysFromCivil(d.year, d.month, d.day)*day +
		(int64(d.hour)*3600+int64(d.minute)*60+int64(d.second))*1_000_000 + int64(d.micro) - offset
	if us > -(1<<53) && us < 1<<53 {
		return float64(us) / 1e6, true
	}
	f, _ := new(big.Rat).SetFrac(big.NewInt(us), big.NewInt(1_000_000)).Float64()
	return f, true
}

// epochSeconds is 1970-01-01T00:00 in CPython's ordinal seconds (0001-01-01 is day 1).
const epochSeconds = int64(719163) * 86400

// ordinalSeconds is CPython's utc_to_seconds: seconds since the day before 0001-01-01, false for a
// year outside 1..9999 (Python's "year N is out of range").
func ordinalSeconds(y, m, d, hh, mm, ss int) (int64, bool) {
	if y < 1 || y > 9999 {
		return 0, false
	}
	ordinal := daysFromCivil(y, m, d) + 719163
	return ((ordinal*24+int64(hh))*60+int64(mm))*60 + int64(ss), true
}

// localSeconds is CPython's local(u): the wall-clock time in loc of the instant u (ordinal
// seconds), as ordinal seconds.
func localSeconds(u int64, loc *time.Location) (int64, bool) {
	t := time.Unix(u-epochSeconds, 0).In(loc)
	return ordinalSeconds(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second())
}

// localToSeconds is CPython's local_to_seconds with fold 0: the instant whose wall-clock time in
// loc is d (the earlier one in a repeated hour, the later offset's reading in a skipped hour). Like
// CPython it fails when a probe a day earlier falls before year 1 (naive 0001-01-01 times).
func localToSeconds(d isoDateTime, loc *time.Location) (int64, bool) {
	const maxFoldSeconds = 24 * 3600
	t, ok := ordinalSeconds(d.year, d.month, d.day, d.hour, d.minute, d.second)
	if !ok {
		return 0, false
	}
	lt, ok := localSeconds(t, loc)
	if !ok {
		return 0, false
	}
	a := lt - t
	u1 := t - a
	t1, ok := localSeconds(u1, loc)
	if !ok {
		return 0, false
	}
	var b int64
	if t1 == t {
		u2 := u1 - maxFoldSeconds
		lt, ok = localSeconds(u2, loc)
		if !ok {
			return 0, false
		}
		b = lt - u2
		if a == b {
			return u1, true
		}
	} else {
		b = t1 - u1
	}
	u2 := t - b
	t2, ok := localSeconds(u2, loc)
	if !ok {
		return 0, false
	}
	if t2 == t {
		return u2, true
	}
	if t1 == t {
		return u1, true
	}
	return max(u1, u2), true // t is in a gap
}
