// Package syncbuf provides [Buffer], a byte buffer safe for concurrent use. Tests use it to collect
// what a logger, a server goroutine or a child process (exec.Cmd's copying goroutine) writes while
// the test reads it.
package syncbuf
