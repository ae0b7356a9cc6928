package bench

import "syscall"

// childSysProcAttr makes a child proxy receive SIGTERM when the bench process dies, so that no
// proxy outlives an interrupted bench.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
