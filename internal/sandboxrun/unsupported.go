//go:build !linux

package sandboxrun

import (
	"context"
	"fmt"
	"runtime"
)

// Run is only implemented on Linux (see the package documentation). Elsewhere it starts nothing
// and returns a Result with outcome sandbox_error and ErrorType unsupported_platform, and an error
// naming the operating system.
func Run(ctx context.Context, s Spec) (Result, error) {
	return Result{Outcome: OutcomeSandboxError, ErrorType: ErrorTypeUnsupportedPlatform},
		fmt.Errorf("sandboxrun: unsupported on %s: Run needs Linux", runtime.GOOS)
}
