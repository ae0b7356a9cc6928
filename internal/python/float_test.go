package python

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Expected values: CPython 3.11 repr(in).
func TestReprFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1e16, "1e+16"},
		{1e15, "1000000000000000.0"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1.5e-7, "1.5e-07"},
		{123.456, "123.456"},
		{math.Copysign(0, -1), "-0.0"},
		{0, "0.0"},
		{1e22, "1e+22"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{5e-324, "5e-324"},
		{9007199254740993.0, "9007199254740992.0"},
		{0.1, "0.1"},
		{100.0, "100.0"},
		{1234567890123456.7, "1234567890123456.8"},
		{12345678901234567.0, "1.2345678901234568e+16"},
		{123456789.123456789, "123456789.12345679"},
		{1.5e300, "1.5e+300"},
		{-1e-5, "-1e-05"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, ReprFloat(tt.in))
		})
	}
}
