package rollouts

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// readBufferSize is the size of the buffered reader under a lineReader; lines longer than it are
// assembled from several reads, so it bounds nothing.
const readBufferSize = 256 << 10

// shrinkAbove is the capacity above which a lineReader drops its line buffer after a long line,
// so one huge row does not pin its memory for the rest of the file.
const shrinkAbove = 16 << 20

// lineReader reads "\n"-terminated lines of any length (no bufio.Scanner token limit).
type lineReader struct {
	r    *bufio.Reader
	buf  []byte
	line int   // 1-based number of the last line returned
	read int64 // bytes returned so far
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, readBufferSize)}
}

// next returns the next line including its "\n" (the last line of the input may lack it), or
// io.EOF after the last line. The returned slice is valid until the next call.
func (lr *lineReader) next() ([]byte, error) {
	if cap(lr.buf) > shrinkAbove {
		lr.buf = nil
	}
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		lr.buf = append(lr.buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (!errors.Is(err, io.EOF) || len(lr.buf) == 0) {
			return nil, err // io.EOF after the last line
		}
		lr.line++
		lr.read += int64(len(lr.buf))
		return lr.buf, nil
	}
}

// isBlank reports whether line holds only JSON whitespace (space, \t, \r, \n).
func isBlank(line []byte) bool { return len(bytes.Trim(line, " \t\r\n")) == 0 }
