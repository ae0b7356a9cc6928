package testvectors

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// DefaultBreakDelay is upstream_behavior.json's delay_s when the file leaves it out
// (conformance/README.md: "default 0.3").
const DefaultBreakDelay = 300 * time.Millisecond

// UpstreamBehavior is a conformance case's upstream_behavior.json (conformance/README.md): the
// upstream sends AbortAfterBytes bytes of its body, waits DelayS seconds, then breaks the
// connection the way How names ("reset": an RST; anything else: a plain close).
type UpstreamBehavior struct {
	AbortAfterBytes int      `json:"abort_after_bytes"`
	How             string   `json:"how"`
	DelayS          *float64 `json:"delay_s"` // nil: DefaultBreakDelay
}

// Delay is the time between the last bytes sent and the break: DelayS, or DefaultBreakDelay
// when the file has no delay_s.
func (b *UpstreamBehavior) Delay() time.Duration {
	if b.DelayS == nil {
		return DefaultBreakDelay
	}
	return time.Duration(*b.DelayS * float64(time.Second))
}

// ReadUpstreamBehavior reads dir/upstream_behavior.json; it returns nil when the case has none and
// fails the test on an unreadable file, an unknown key, a negative byte count or a negative delay.
func ReadUpstreamBehavior(t testing.TB, dir string) *UpstreamBehavior {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "upstream_behavior.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatalf("testvectors: %v", err)
	}
	ub, err := parseUpstreamBehavior(b)
	if err != nil {
		t.Fatalf("testvectors: %s/upstream_behavior.json: %v", filepath.Base(dir), err)
	}
	return ub
}

func parseUpstreamBehavior(b []byte) (*UpstreamBehavior, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var ub UpstreamBehavior
	if err := d.Decode(&ub); err != nil {
		return nil, err
	}
	if ub.AbortAfterBytes < 0 {
		return nil, errors.New("abort_after_bytes is negative")
	}
	if ub.DelayS != nil && !(*ub.DelayS >= 0) {
		return nil, errors.New("delay_s is negative")
	}
	return &ub, nil
}
