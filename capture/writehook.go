package capture

// WithWriteHook installs an injectable fault in the store's file layer, for tests of a full or
// failing disk: hook is called once per group commit, under the capture file's exclusive flock and
// before anything is written, with the file's path and the bytes the commit is about to write (the
// batch's lines plus a SPEC §0 D7 repair newline, when one is needed; a line given to
// [Store.AppendStream] counts as its size hint). A nil error lets the commit proceed (n is
// ignored). An error makes the store write only the first n bytes of the batch (n clamped to
// 0..size), as a file system that fills up during a write does, then fail the commit: the partial
// bytes are cut back and every Append of the batch returns an error wrapping hook's (errors.Is
// finds e.g. unix.ENOSPC). Default none. The hook may be called from many goroutines at once (one
// per file being committed).
func WithWriteHook(hook func(path string, size int) (n int, err error)) StoreOption {
	return storeOptionFunc(func(c *storeConfig) { c.writeHook = hook })
}
