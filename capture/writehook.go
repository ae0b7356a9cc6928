package capture

// WithWriteHook installs an injectable fault in the store's file layer, for tests of a full or
// failing disk: hook is called once per group commit, while the capture file's exclusive flock is
// held and before anything is written, with the file's path and the number of bytes the commit is
// about to write (the batch's lines plus a SPEC §0 D7 repair newline, when one is needed; a line
// given to [Store.AppendStream] counts as its size hint).
//
// When hook returns a nil error the commit proceeds unchanged (n is ignored). When it returns an
// error, the store writes only the first n bytes of the batch (n clamped to 0..size), as a file
// system that fills up during a write does (a short write, then ENOSPC), and fails the commit with
// that error: the partial bytes are cut back ([Store.Append]: no partial line of ours stays behind)
// and every Append of the batch returns an error wrapping hook's error (errors.Is finds it, e.g.
// unix.ENOSPC). Default none. The hook may be called from many goroutines at once (one per file
// being committed).
func WithWriteHook(hook func(path string, size int) (n int, err error)) StoreOption {
	return storeOptionFunc(func(c *storeConfig) { c.writeHook = hook })
}
