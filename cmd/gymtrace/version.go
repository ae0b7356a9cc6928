package main

import (
	"cmp"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newVersionCmd) }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the gymtrace version",
		Args:  noPositionalArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "gymtrace "+version())
			return err
		},
	}
}

// version describes the running binary from its build info: the module version, else "(devel)"
// with the VCS revision and a "+dirty" mark when known, then the Go version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := cmp.Or(bi.Main.Version, "(devel)")
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && v == "(devel)" {
		v += " " + rev[:min(len(rev), 12)]
		if modified == "true" {
			v += "+dirty"
		}
	}
	return v + " " + bi.GoVersion
}
