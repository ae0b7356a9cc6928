package jaegertest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (exporters, HTTP clients, exec pipes).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
