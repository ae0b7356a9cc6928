package claudecode

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

	"github.com/gymtrace/gymtrace/internal/ojson"
)

// TestPyISOTimestampMatchesCPython replays testdata/isotime.json: datetime.fromisoformat(s)
// .timestamp() computed by CPython 3.13 with TZ=UTC (testdata/isotime_gen.py), naive values read
// in UTC here too.
func TestPyISOTimestampMatchesCPython(t *testing.T) {
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
		got, ok := pyISOTimestamp(c.In, time.UTC)
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

func TestTimestampOf(t *testing.T) {
	tests := []struct {
		name string
		json string
		want *float64
	}{
		{"UTC Z", `"2026-07-22T10:00:01Z"`, ptr(1784714401.0)},
		{"every Z is replaced", `"2026-07-22T10:00:01ZZ"`, nil},
		{"milliseconds", `"2026-07-22T10:00:02.100Z"`, ptr(1784714402.1)},
		{"offset", `"2026-07-22T12:00:00+02:00"`, ptr(1784714400.0)},
		{"naive is local (UTC here)", `"2026-07-22T10:00:00"`, ptr(1784714400.0)},
		{"integer", `1784714400`, ptr(1784714400.0)},
		{"float", `1.5`, ptr(1.5)},
		{"bool is not a number", `true`, nil},
		{"null", `null`, nil},
		{"bad string", `"bad-timestamp"`, nil},
		{"object", `{}`, nil},
		{"integer beyond float64", `1` + string(make([]byte, 0)) + `00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ojson.ParsePython([]byte(tt.json))
			require.NoError(t, err)
			assert.Equal(t, tt.want, timestampOf(v, true, time.UTC))
		})
	}
	assert.Nil(t, timestampOf(ojson.Null(), false, time.UTC), "absent key")

	t.Run("naive times use the given zone", func(t *testing.T) {
		loc := time.FixedZone("X", 3600)
		got := timestampOf(ojson.String("2026-07-22T11:00:00.25"), true, loc)
		require.NotNil(t, got)
		assert.Equal(t, 1784714400.25, *got)
	})
	t.Run("large aware values round like Python's int division", func(t *testing.T) {
		got, ok := pyISOTimestamp("9999-12-31T23:59:59.999999+00:00", time.UTC)
		require.True(t, ok)
		assert.Equal(t, 253402300799.999999, got)
		assert.False(t, math.IsInf(got, 0))
	})
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
			got, ok := pyISOTimestamp(tt.in, loc)
			if tt.want == nil {
				assert.False(t, ok, "got %v", got)
				return
			}
			require.True(t, ok)
			assert.Equal(t, *tt.want, got)
		})
	}
}

func FuzzPyISOTimestamp(f *testing.F) {
	for _, s := range []string{"2026-07-22T10:00:01+00:00", "2026-W30-3T10", "20260722T1000001", "2026-07-22\x0010", "2026-07-2é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := pyISOTimestamp(s, time.UTC)
		if ok && (math.IsNaN(got) || math.IsInf(got, 0)) {
			t.Fatalf("%q: non-finite %v", s, got)
		}
	})
}
