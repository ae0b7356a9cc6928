package python

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
	_ "time/tzdata" // the zones of TestNaiveLocalTimes, whatever the machine has

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestISOTimestampMatchesCPython replays testdata/isotime.json: datetime.fromisoformat(s)
// .timestamp() computed by CPython 3.13 with TZ=UTC (testdata/isotime_gen.py), naive values read
// in UTC here too.
func TestISOTimestampMatchesCPython(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "isotime.json"))
	require.NoError(t, err)
	var file struct {
		Python string `json:"python"`
		Cases  []struct {
			In   string          `json:"in"`
			Want json.RawMessage `json:"want"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &file))
	require.Greater(t, len(file.Cases), 3000)
	valid := 0
	for _, c := range file.Cases {
		got, ok := ISOTimestamp(c.In, time.UTC)
		if string(c.Want) == "null" {
			assert.False(t, ok, "%q: CPython raises, got %v", c.In, got)
			continue
		}
		valid++
		var want float64
		require.NoError(t, json.Unmarshal(c.Want, &want))
		if assert.True(t, ok, "%q: CPython gives %v", c.In, want) {
			assert.Equal(t, want, got, "%q", c.In) // bit-exact
		}
	}
	assert.Greater(t, valid, 500)
}

func TestISOTimestampLargeAwareValues(t *testing.T) {
	// Large aware values round like Python's int true division, not like float arithmetic.
	got, ok := ISOTimestamp("9999-12-31T23:59:59.999999+00:00", time.UTC)
	require.True(t, ok)
	assert.Equal(t, 253402300799.999999, got)
}

// TestNaiveLocalTimes: naive date-times follow CPython 3.13's local_to_seconds (fold 0) in the
// given zone, skipped and repeated hours included; wants computed with TZ set to each zone.
func TestNaiveLocalTimes(t *testing.T) {
	tests := []struct {
		zone, in string
		want     *float64
	}{
		{"America/New_York", "2026-03-08T02:30:00", ptr(1772955000.0)}, // skipped hour
		{"America/New_York", "2026-03-08T01:59:59", ptr(1772953199.0)},
		{"America/New_York", "2026-03-08T03:00:00", ptr(1772953200.0)},
		{"America/New_York", "2026-11-01T01:30:00", ptr(1793511000.0)}, // repeated hour: the earlier
		{"America/New_York", "2026-11-01T00:59:59", ptr(1793509199.0)},
		{"America/New_York", "2026-11-01T02:00:00", ptr(1793516400.0)},
		{"America/New_York", "0001-01-02T03:00:00", ptr(-62135481838.0)}, // local mean time
		{"America/New_York", "9999-12-31T23:00:00", ptr(253402315200.0)},
		{"Asia/Tokyo", "9999-12-31T23:00:00", nil}, // local(t) reaches year 10000
		{"Asia/Tokyo", "0001-01-02T03:00:00", ptr(-62135533139.0)},
		{"UTC", "0001-01-01T23:59:59", nil}, // the fold probe reaches year 0
		{"UTC", "1969-12-31T23:59:59.5", ptr(-0.5)},
	}
	for _, tt := range tests {
		t.Run(tt.zone+" "+tt.in, func(t *testing.T) {
			loc, err := time.LoadLocation(tt.zone)
			require.NoError(t, err)
			got, ok := ISOTimestamp(tt.in, loc)
			if tt.want == nil {
				assert.False(t, ok, "got %v", got)
				return
			}
			require.True(t, ok)
			assert.Equal(t, *tt.want, got)
		})
	}
}

func FuzzISOTimestamp(f *testing.F) {
	for _, s := range []string{"2026-07-22T10:00:01+00:00", "2026-W30-3T10", "20260722T1000001", "2026-07-22\x0010", "2026-07-2é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ISOTimestamp(s, time.UTC)
		if ok && (math.IsNaN(got) || math.IsInf(got, 0)) {
			t.Fatalf("%q: non-finite %v", s, got)
		}
	})
}

func ptr(f float64) *float64 { return &f }
