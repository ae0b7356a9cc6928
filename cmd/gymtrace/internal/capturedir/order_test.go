package capturedir

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"2-0", "10-0", -1},
		{"1-9", "1-10", -1},
		{"a", "b", -1},
		{"task-2", "task-10", -1},
		{"1-01", "1-1", -1}, // equal numbers: byte order decides
		{"1-1", "1-01", 1},
		{"x", "x", 0},
		{"a", "a-1", -1},
		{"99999999999999999999999", "100000000000000000000000", -1}, // no overflow
		{"0-0", "uncorrelated", -1},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			assert.Equal(t, tt.want, sign(Compare(tt.a, tt.b)))
			assert.Equal(t, -tt.want, sign(Compare(tt.b, tt.a)), "antisymmetric")
		})
	}
	ids := []string{"10-0", "2-1", "uncorrelated", "2-0", "1-10", "1-9"}
	slices.SortFunc(ids, Compare)
	assert.Equal(t, []string{"1-9", "1-10", "2-0", "2-1", "10-0", "uncorrelated"}, ids)
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

func FuzzCompare(f *testing.F) {
	f.Add("2-0", "10-0", "1-01")
	f.Add("a", "a0", "a00")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if (Compare(a, b) == 0) != (a == b) {
			t.Fatalf("Compare(%q, %q) = 0 only for equal strings", a, b)
		}
		if sign(Compare(a, b)) != -sign(Compare(b, a)) {
			t.Fatalf("not antisymmetric: %q %q", a, b)
		}
		if Compare(a, b) < 0 && Compare(b, c) < 0 && Compare(a, c) >= 0 {
			t.Fatalf("not transitive: %q < %q < %q but not %q < %q", a, b, c, a, c)
		}
	})
}
