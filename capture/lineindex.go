package capture

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"

	"golang.org/x/sys/unix"
)

// maxIndexedFiles bounds how many files' line indexes a Store keeps; an evicted index is rebuilt
// from its file on the next keyed append to it.
const maxIndexedFiles = 1024

// lineIndex is what a Store knows of the idempotency keys (a record's model_call_id) already in
// one file: the keys of every complete line up to size, for the file identified by dev and ino.
// It is checked against the file under the file's flock(LOCK_EX), on every commit that appends a
// keyed line: when the file is the same one and has not grown, the index is current; when it grew
// (another process or another Store appended), only the new tail is read; when it is another file
// (removed and recreated, e.g. by Clear) or shorter, it is rebuilt from the whole file. Files of
// the store are only ever appended to or removed (SPEC §2), which is what makes size and identity
// enough. An index is used by one committer at a time (the file's group-commit queue, or the
// flock between Stores).
type lineIndex struct {
	keyOf    func(line []byte) string
	dev, ino uint64
	size     int64 // bytes of the file the keys cover, up to and including a line's "\n"
	keys     map[indexKey]struct{}
}

// indexKey is what an index holds of a key: its SHA-256, so that an index takes 32 bytes per line
// (plus the map's own) however long the keys are (a model_call_id is whatever the span says: a
// hostile sender's megabyte ids cost the index no more than a UUID), with no collision to fear
// between two keys of one file.
type indexKey [sha256.Size]byte

func indexKeyOf(k string) indexKey { return sha256.Sum256([]byte(k)) }

// index returns path's line index, creating an empty one (rebuilt at its first use).
func (s *Store) index(path string, keyOf func([]byte) string) *lineIndex {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.indexes[path]
	if x == nil {
		if len(s.indexes) >= maxIndexedFiles {
			for p := range s.indexes { // evict any one
				delete(s.indexes, p)
				break
			}
		}
		x = &lineIndex{keyOf: keyOf}
		s.indexes[path] = x
	}
	return x
}

// sync brings the index up to date with the locked file fd whose fstat is st.
func (x *lineIndex) sync(fd int, st *unix.Stat_t) error {
	if x.keys == nil || x.dev != uint64(st.Dev) || x.ino != uint64(st.Ino) || st.Size < x.size {
		x.keys = make(map[indexKey]struct{})
		x.dev, x.ino, x.size = uint64(st.Dev), uint64(st.Ino), 0
	}
	// The tail is read in windows of indexReadBytes, so the memory held is a window plus the
	// longest line, never the file.
	var line []byte // the start of a line that runs past the window
	buf := make([]byte, min(indexReadBytes, st.Size-x.size))
	for off := x.size; off < st.Size; {
		w := buf[:min(int64(len(buf)), st.Size-off)]
		if err := preadFull(fd, w, off); err != nil {
			x.keys = nil
			return err
		}
		off += int64(len(w))
		for {
			i := bytes.IndexByte(w, '\n')
			if i < 0 {
				line = append(line, w...)
				break
			}
			whole := w[:i]
			if len(line) > 0 {
				line = append(line, whole...)
				whole = line
			}
			if k := x.keyOf(trimASCIISpace(whole)); k != "" {
				x.keys[indexKeyOf(k)] = struct{}{}
			}
			x.size += int64(len(whole)) + 1
			line, w = line[:0], w[i+1:]
		}
	}
	// An unterminated last line (in line) is a torn write (SPEC §0 D7): never a key, and read
	// again next time.
	return nil
}

// indexReadBytes is the window in which a line index reads a file's new tail.
const indexReadBytes = 1 << 20

// dedupe marks the keyed requests of batch whose key is in the file, or earlier in the batch, as
// duplicates, adds the other keys to the index and returns the requests to write (batch itself when
// none is a duplicate). A duplicate of an earlier request of the batch shares that request's fate
// (failed takes its mark back).
func (x *lineIndex) dedupe(batch []*appendReq) []*appendReq {
	dups := 0
	for _, r := range batch {
		if r.key == "" {
			continue
		}
		k := indexKeyOf(r.key)
		if _, ok := x.keys[k]; ok {
			r.dup = true
			dups++
			continue
		}
		x.keys[k] = struct{}{}
		r.keyNew = true
	}
	if dups == 0 {
		return batch
	}
	write := make([]*appendReq, 0, len(batch)-dups)
	for _, r := range batch {
		if !r.dup {
			write = append(write, r)
		}
	}
	return write
}

// covers reports whether the index, just synced with the locked file whose fstat is st, holds
// every line of the whole file: then the file's last byte is the "\n" of its last line (an index
// only ever covers whole lines), and a commit needs no read to check it (SPEC §0 D7).
func (x *lineIndex) covers(st *unix.Stat_t) bool {
	return x.keys != nil && x.dev == uint64(st.Dev) && x.ino == uint64(st.Ino) && x.size == st.Size
}

// committed updates the index after the requests written were committed to its file, which now
// ends at end (the length the commit found plus the bytes it wrote, all of them whole lines and
// the D7 repair newline): their keys stay (unkeyed whole lines are keyed by keyOf; an unkeyed
// streamed line makes the index stale) and size moves to end.
func (x *lineIndex) committed(end int64, written []*appendReq) {
	if x.keys == nil {
		return
	}
	for _, r := range written {
		if r.key != "" {
			continue
		}
		if r.write != nil {
			x.keys = nil // its key is unknown: rebuild next time
			return
		}
		if k := x.keyOf(trimASCIISpace(r.line)); k != "" {
			x.keys[indexKeyOf(k)] = struct{}{}
		}
	}
	x.size = end
}

// failed takes back the keys a failed commit added (its lines were cut back, or may not be
// durable: a retry must write them again), and the duplicate marks of requests whose line was one
// of them, so those fail with the commit too.
func (x *lineIndex) failed(batch []*appendReq) {
	added := map[string]bool{}
	for _, r := range batch {
		if r.keyNew {
			delete(x.keys, indexKeyOf(r.key))
			added[r.key] = true
		}
	}
	for _, r := range batch {
		if r.dup && added[r.key] {
			r.dup = false
		}
	}
}

// pwriteFull writes b at offset off.
func pwriteFull(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := unix.Pwrite(fd, b, off)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return io.ErrShortWrite
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// preadFull reads len(b) bytes at offset off.
func preadFull(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := unix.Pread(fd, b, off)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}
