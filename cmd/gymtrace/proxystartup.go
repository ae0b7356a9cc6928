package main

import (
	"fmt"
	"net"
	"os"
)

// probeWritable checks at startup that the proxy can create files in dir, so a read-only directory
// fails the start (exit 1) instead of losing every record at run time.
func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".gymtrace-write-probe-*")
	if err != nil {
		return fmt.Errorf("%s is not writable: %w", dir, pathErrCause(err))
	}
	name := f.Name()
	err = f.Close()
	if rmErr := os.Remove(name); err == nil {
		err = rmErr
	}
	if err != nil {
		return fmt.Errorf("%s: write probe: %w", dir, err)
	}
	return nil
}

// isLoopback reports whether addr is a TCP address on a loopback interface.
func isLoopback(addr net.Addr) bool {
	a, ok := addr.(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}
