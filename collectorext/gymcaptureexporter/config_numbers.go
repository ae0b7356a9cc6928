package gymcaptureexporter

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"go.opentelemetry.io/collector/confmap"
)

// integerKey is one integer setting of the observations_trace_window section: its key in the
// section and the bits of the Go field that holds it.
type integerKey struct {
	key  string
	bits int
	hint string // appended to the error: how the number is read
}

// traceWindowIntegers are the integer settings of observations_trace_window. A duration written
// as a number (no unit) is an integer of nanoseconds; one written as a string is left to the
// Collector's duration decoding.
var traceWindowIntegers = []integerKey{
	{key: "duration", bits: 64, hint: " (a number without a unit is read as nanoseconds; write it with one, e.g. 1m)"},
	{key: "max_traces", bits: strconv.IntSize},
	{key: "max_held_spans", bits: strconv.IntSize},
	{key: "max_held_bytes", bits: 64},
}

var _ confmap.Unmarshaler = (*TraceWindowConfig)(nil)

// Unmarshal decodes the observations_trace_window section over c's values (the defaults). Before
// decoding it refuses a number an integer setting (duration given as a number, max_traces,
// max_held_spans, max_held_bytes) cannot hold as written: a fractional number (65536.5), one
// that is not finite, or one out of the field's range (above 9223372036854775807 or below
// -9223372036854775808 on 64-bit platforms; a YAML integer too large for 64 bits is read as a
// float, and the error shows it as YAML read it, e.g. 99999999999999999999 as
// 100000000000000000000). The Collector's decoding would otherwise cut the fraction or wrap
// the number, and Validate would report a value that was never written. A whole number written
// as a float (65536.0, 1e6) is accepted. The errors name the key, the value and the rule, and
// are joined.
func (c *TraceWindowConfig) Unmarshal(conf *confmap.Conf) error {
	var errs []error
	for _, k := range traceWindowIntegers {
		if err := checkInteger(conf.Get(k.key), k.bits); err != nil {
			errs = append(errs, fmt.Errorf("observations_trace_window::%s: %w%s", k.key, err, k.hint))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return conf.Unmarshal(c)
}

// checkInteger returns an error when v, a number as YAML read it, is not a whole number a signed
// integer of bits bits holds. Other values (absent, strings, booleans) are left to the decoder,
// which refuses what its field cannot take.
func checkInteger(v any, bits int) error {
	maxInt := int64(1)<<(bits-1) - 1
	minInt := -maxInt - 1
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch n := rv.Int(); {
		case n > maxInt:
			return fmt.Errorf("%d is out of range: at most %d", n, maxInt)
		case n < minInt:
			return fmt.Errorf("%d is out of range: at least %d", n, minInt)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n := rv.Uint(); n > uint64(maxInt) {
			return fmt.Errorf("%d is out of range: at most %d", n, maxInt)
		}
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		text := strconv.FormatFloat(f, 'f', -1, 64)
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f):
			return fmt.Errorf("%s is not a whole number: an integer is required", text)
		case f >= math.Ldexp(1, bits-1):
			return fmt.Errorf("%s (the number as YAML read it) is out of range: at most %d", text, maxInt)
		case f < -math.Ldexp(1, bits-1):
			return fmt.Errorf("%s (the number as YAML read it) is out of range: at least %d", text, minInt)
		}
	}
	return nil
}
