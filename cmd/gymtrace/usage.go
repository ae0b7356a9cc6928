package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// enforceUsageErrors makes every wrong call of root's finished command tree a usage error (exit code
// 2, DESIGN.md "CLI contract"; unknown flags go through the root's flag error function): an unknown
// help topic (the help command is ours), and wrong arguments for any command, cobra's completion
// command included (added now rather than during Execute).
func enforceUsageErrors(root *cobra.Command) {
	root.SuggestionsMinimumDistance = 2
	root.SetHelpCommand(newHelpCmd())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	usageArgs(root)
}

// unknownCommand rejects any positional argument of a command group as an unknown command, with
// cobra's suggestions.
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

// usageArgs makes the Args check of cmd and every command below it return usage errors (cobra's
// own checks do not). A command group (the root included) becomes runnable, printing its help, so
// that an unknown subcommand reaches unknownCommand: cobra's own error would exit 1 or 0.
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

// newHelpCmd is `gymtrace help [command]`; an unknown command is a usage error.
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
