package proxy

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaks a goroutine (servers, decoders, upstream connections). It is
// the package's only TestMain.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
