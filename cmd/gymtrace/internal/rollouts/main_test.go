package rollouts

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (Attach and Clear start none).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
