//go:build !linux

package bench

import "syscall"

// childSysProcAttr returns the default attributes: only Linux has a parent-death signal.
func childSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
