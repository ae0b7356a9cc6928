package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// cliResult is what one in-process gymtrace run produced.
type cliResult struct {
	stdout, stderr string
	err            error
	code           int // exit code main would use
}

// runGymtrace runs the gymtrace root command with args in process, capturing stdout and stderr.
func runGymtrace(t *testing.T, args ...string) cliResult {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	return cliResult{stdout: out.String(), stderr: errb.String(), err: err, code: exitCode(err)}
}

// readFixtureDir is the absolute path of the calls/metrics capture fixture.
func readFixtureDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "readcmds", "captures"))
	require.NoError(t, err)
	return dir
}
