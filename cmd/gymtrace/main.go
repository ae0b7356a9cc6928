// Command gymtrace captures every model call of an RL or evaluation rollout: a capture proxy in front of a
// model server, plus commands to read, aggregate and attach the captures (see README.md).
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// commands holds the constructors of the subcommands; each subcommand's file registers itself in init.
var commands []func() *cobra.Command

// usageError marks an error as a usage error (exit code 2, DESIGN.md "CLI contract").
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErrorf returns a usage error (exit code 2) with a formatted message.
func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "gymtrace",
		Short:         "Capture every model call of every rollout as OpenTelemetry spans and Gym-compatible capture files",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, c := range commands {
		root.AddCommand(c())
	}
	enforceUsageErrors(root) // usage.go: unknown commands and bad arguments exit 2
	return root
}

// exitCode maps an error to the CLI's exit codes: 0 success, 1 failure, 2 usage error.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func main() {
	err := newRootCmd().Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gymtrace:", err)
	}
	os.Exit(exitCode(err))
}
