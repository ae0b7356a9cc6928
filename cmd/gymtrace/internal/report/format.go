package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// shellSafe are the bytes [ShellQuote] leaves unquoted.
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,:@%="

// ShellQuote returns s as one word of a POSIX shell command: unchanged when it is not empty and
// holds only letters, digits and "/._-+,:@%=", else in single quotes (an inner single quote is
// closed, escaped with a backslash and reopened).
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, shellSafe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dash stands for an unknown value in tables.
const dash = "-"

// fmtInt formats an optional count; nil is [dash].
func fmtInt(v *int64) string {
	if v == nil {
		return dash
	}
	return strconv.FormatInt(*v, 10)
}

// fmtStatus formats an optional HTTP status; nil is [dash].
func fmtStatus(v *int) string {
	if v == nil {
		return dash
	}
	return strconv.Itoa(*v)
}

// fmtTime formats optional UTC Unix seconds as "2006-01-02 15:04:05.000Z"; nil, NaN, infinite
// or absurd values are [dash].
func fmtTime(v *float64) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) || math.Abs(*v) > 1e11 {
		return dash
	}
	sec, frac := math.Modf(*v)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC().Format("2006-01-02 15:04:05.000Z")
}

// fmtMS formats an optional duration in milliseconds for people: "842ms", "12.3s", "4m05s",
// "2h03m"; nil (or NaN) is [dash].
func fmtMS(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return dash
	}
	return formatDuration(*v)
}

func formatDuration(ms float64) string { return formatDurationDigits(ms, 0) }

// formatDurationDigits is formatDuration with extra more decimals below a minute ("1.5ms" for
// extra 1 where formatDuration writes "2ms").
func formatDurationDigits(ms float64, extra int) string {
	switch {
	case ms == 0:
		return "0"
	case ms < 0:
		return "-" + formatDurationDigits(-ms, extra)
	case ms < 1:
		return strconv.FormatFloat(ms, 'f', 2+extra, 64) + "ms"
	case ms < 1000 && extra == 0:
		return strconv.FormatFloat(math.Round(ms), 'f', 0, 64) + "ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', extra, 64) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(ms/1000, 'f', 1+extra, 64) + "s"
	case ms < 3_600_000:
		s := int64(math.Round(ms / 1000))
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	m := int64(math.Round(ms / 60_000))
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}

// tailTrim keeps the end of s within max runes, marking the cut with a leading "…": rollout ids
// differ at their end ("task-12-rollout-3").
func tailTrim(s string, max int) string {
	r := []rune(s)
	if max < 2 || len(r) <= max {
		return s
	}
	return "…" + string(r[len(r)-(max-1):])
}

// clean makes a value from a capture file safe for a terminal cell: every control character
// (including ESC, so no terminal escape sequence gets through, and newlines) becomes '?'.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}
