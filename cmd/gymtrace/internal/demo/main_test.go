package demo

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: Run and the test servers must stop every
// server, handler and connection they start. It is the package's only TestMain.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
