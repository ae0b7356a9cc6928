package capture

import (
	"bytes"
	"errors"
	"fmt"
)

// batchWriter writes one group commit to its locked capture file: the D7 repair newline when the
// file's last byte is not "\n", whole lines with as few writev calls as possible, and streamed
// lines ([Store.AppendStream]) piece by piece as their writers produce them, all within the byte
// budget the write hook ([WithWriteHook]) allows.
type batchWriter struct {
	fd      int
	written int64 // bytes written so far
	repair  bool  // write "\n" first (SPEC §0 D7)
	budget  int   // bytes the write hook still lets through; -1 when unlimited
	hookErr error // the write hook's error: the commit fails with it after budget bytes
}

// newBatchWriter reads the file's last byte (size is its current length), unless endsLine says the
// caller knows it to be "\n" (a line index that covers the whole file), and asks the write hook,
// if any, about the commit's size (streamed lines counted by their size hints).
func (s *Store) newBatchWriter(fd int, path string, batch []*appendReq, size int64, endsLine bool) (*batchWriter, error) {
	bw := &batchWriter{fd: fd, budget: -1}
	if size > 0 && !endsLine {
		last, err := lastByte(fd, size)
		if err != nil {
			return nil, pathErr("read", path, err)
		}
		bw.repair = last != '\n'
	}
	if s.cfg.writeHook != nil {
		total := 0
		if bw.repair {
			total++
		}
		for _, r := range batch {
			if r.write != nil {
				total += r.hint
			} else {
				total += len(r.line)
			}
		}
		if n, herr := s.cfg.writeHook(path, total); herr != nil {
			bw.budget, bw.hookErr = min(max(n, 0), total), herr
		}
	}
	return bw, nil
}

// writeBatch writes the batch's lines in queue order.
func (bw *batchWriter) writeBatch(batch []*appendReq) error {
	bufs := make([][]byte, 0, min(len(batch), maxBatchLines)+1)
	if bw.repair {
		bufs = append(bufs, newline) // D7: keep the torn line apart from ours
	}
	for _, r := range batch {
		if r.write == nil {
			bufs = append(bufs, r.line)
			continue
		}
		if err := bw.write(bufs); err != nil {
			return err
		}
		bufs = bufs[:0]
		if err := bw.stream(r); err != nil {
			return err
		}
	}
	if err := bw.write(bufs); err != nil {
		return err
	}
	return bw.hookErr
}

// write writes bufs whole, or only as much as the write hook's budget allows (then it returns the
// hook's error).
func (bw *batchWriter) write(bufs [][]byte) error {
	if bw.budget < 0 {
		return bw.writeAll(bufs)
	}
	part := make([][]byte, 0, len(bufs))
	cut := false
	for _, b := range bufs {
		k := min(bw.budget, len(b))
		if k > 0 {
			part = append(part, b[:k])
			bw.budget -= k
		}
		if k < len(b) {
			cut = true
			break
		}
	}
	if err := bw.writeAll(part); err != nil || !cut {
		return err
	}
	return bw.hookErr
}

// writeAll writes bufs whole ([writeAll]) and counts their bytes in written.
func (bw *batchWriter) writeAll(bufs [][]byte) error {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	if err := writeAll(bw.fd, bufs); err != nil {
		return err
	}
	bw.written += int64(n)
	return nil
}

// stream runs a streamed line's writer, writing each piece as it comes and checking that the
// pieces form one record line. The first refused or failed piece fails the line, whatever the
// writer does with the error: later pieces are refused with it and it is the result.
func (bw *batchWriter) stream(r *appendReq) error {
	var check lineCheck
	var emitErr error
	err := r.write(func(piece []byte) error {
		if emitErr != nil {
			return emitErr
		}
		if emitErr = check.feed(piece); emitErr != nil {
			return emitErr
		}
		emitErr = bw.write([][]byte{piece})
		return emitErr
	})
	if emitErr != nil {
		return emitErr
	}
	if err != nil {
		return err
	}
	return check.end()
}

// lineCheck enforces Append's line contract (see checkLine) on a line that arrives in pieces.
type lineCheck struct {
	n    int     // bytes so far
	tail [2]byte // the last two bytes so far
	nl   bool    // the last byte so far is the line's newline
}

func (c *lineCheck) feed(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if c.nl {
		return fmt.Errorf(`line must hold exactly one record: newline at byte %d`, c.n-1)
	}
	if c.n == 0 && p[0] != '{' {
		return errors.New(`line must be one JSON object ending in "}\n"`)
	}
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		if i != len(p)-1 {
			return fmt.Errorf(`line must hold exactly one record: newline at byte %d`, c.n+i)
		}
		c.nl = true
	}
	if len(p) >= 2 {
		c.tail = [2]byte{p[len(p)-2], p[len(p)-1]}
	} else {
		c.tail = [2]byte{c.tail[1], p[0]}
	}
	c.n += len(p)
	return nil
}

func (c *lineCheck) end() error {
	if c.n < 3 || !c.nl || c.tail[0] != '}' {
		return errors.New(`line must be one JSON object ending in "}\n"`)
	}
	return nil
}
