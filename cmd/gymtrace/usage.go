package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// This file makes every way of calling gymtrace wrongly a usage error (exit code 2, DESIGN.md "CLI
// contract"): an unknown command or help topic, a wrong number of arguments for any command (cobra's
// own help and completion commands included) and, through the root's flag error function, an unknown
// or malformed flag.

// enforceUsageErrors installs the usage-error checks on the finished command tree of root: the help
// command is ours (an unknown topic is a usage error), cobra's completion command is added now rather
// than during Execute, and every command's Args check reports usage errors. The root itself becomes
// runnable (printing its help) so that an unknown command reaches its Args check: cobra's own
// unknown-command error would exit 1.
func enforceUsageErrors(root *cobra.Command) {
	root.SuggestionsMinimumDistance = 2
	root.SetHelpCommand(newHelpCmd())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	usageArgs(root)
}

// unknownCommand is the root's Args check: any positional argument is an unknown command (a usage
// error naming it, with cobra's suggestions).
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usageError{errors.New(msg)}
}

// usageArgs makes the Args check of cmd and of every command below it return usage errors, whatever
// check it uses (ours already do; cobra's NoArgs, ExactArgs, ... do not). A command that only groups
// subcommands (cobra would print its help for any arguments and exit 0) prints its help when called
// without arguments, and an unknown subcommand is a usage error.
func usageArgs(cmd *cobra.Command) {
	if !cmd.Runnable() && cmd.HasSubCommands() {
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		if cmd.Args == nil {
			cmd.Args = unknownCommand
		}
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			err := check(c, args)
			var ue usageError
			if err == nil || errors.As(err, &ue) {
				return err
			}
			return usageError{err}
		}
	}
	for _, sub := range cmd.Commands() {
		usageArgs(sub)
	}
}

// newHelpCmd is `gymtrace help [command]`: the help of the named command, or a usage error when no
// command has that name.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help prints the help of any command: gymtrace help [path to command].",
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				return usageErrorf("unknown help topic %q", strings.Join(args, " "))
			}
			target.InitDefaultHelpFlag()
			return target.Help()
		},
	}
}
