package bench

import "fmt"

// Memory bound of issue 6: the capture proxy's peak RSS must stay within memoryBoundFactor times the
// bytes of the responses in flight plus memoryBoundBase (for 256 concurrent 1 MiB streams).
const (
	memoryBoundFactor = 2.5
	memoryBoundBase   = 64 << 20
)

// MemoryCheck compares the capture proxy's peak RSS in one cell with the memory bound, taking as
// in-flight bytes the concurrency times the response size (every caller has one response in flight).
type MemoryCheck struct {
	// InFlightBytes is concurrency × response bytes.
	InFlightBytes int64 `json:"in_flight_bytes"`
	// BoundBytes is 2.5 × InFlightBytes + 64 MiB.
	BoundBytes int64 `json:"bound_bytes"`
	// PeakRSSBytes is the capture proxy's peak RSS; nil when it could not be measured.
	PeakRSSBytes *int64 `json:"peak_rss_bytes,omitempty"`
	// Met reports PeakRSSBytes <= BoundBytes (false when not measured).
	Met bool `json:"met"`
}

func newMemoryCheck(inFlight int64, peak *int64) *MemoryCheck {
	m := &MemoryCheck{
		InFlightBytes: inFlight,
		BoundBytes:    int64(memoryBoundFactor*float64(inFlight)) + memoryBoundBase,
		PeakRSSBytes:  peak,
	}
	m.Met = peak != nil && *peak <= m.BoundBytes
	return m
}

// line is the report's sentence for the check.
func (m *MemoryCheck) line(workload string, concurrency int) string {
	const mib = 1 << 20
	verdict := "NOT met"
	if m.Met {
		verdict = "met"
	}
	peak := "unknown"
	if m.PeakRSSBytes != nil {
		peak = fmt.Sprintf("%.0f MiB", float64(*m.PeakRSSBytes)/mib)
	}
	return fmt.Sprintf("memory: %s c=%d: capture proxy peak RSS %s with %.0f MiB of responses in flight; bound %.1f × in flight + %d MiB = %.0f MiB: %s",
		workload, concurrency, peak, float64(m.InFlightBytes)/mib, memoryBoundFactor, memoryBoundBase/mib, float64(m.BoundBytes)/mib, verdict)
}
