package report

import "io"

// htmlControls writes what it is given with every control character HTML does not allow in text
// replaced by '?': the C0 controls but tab, newline and carriage return, DEL, and the C1 controls
// U+0080–U+009F (bytes 0xC2 0x80–0x9F in UTF-8). html/template escapes markup, not these, and a
// value from a capture file (a model name) could otherwise carry a terminal escape sequence into a
// page someone cats (from a fresh-user trial: ESC and BEL bytes in table cells). Our own template
// holds none of them. Close writes a 0xC2 still pending at the end.
type htmlControls struct {
	w         io.Writer
	pendingC2 bool // the last byte written was 0xC2 (the lead byte of a C1 control, or of another character)
	buf       []byte
}

func (h *htmlControls) Write(p []byte) (int, error) {
	out := h.buf[:0]
	for _, b := range p {
		if h.pendingC2 {
			h.pendingC2 = false
			if b >= 0x80 && b <= 0x9F {
				out = append(out, '?')
				continue
			}
			out = append(out, 0xC2)
		}
		switch {
		case b == 0xC2:
			h.pendingC2 = true
		case b < 0x20 && b != '\t' && b != '\n' && b != '\r', b == 0x7F:
			out = append(out, '?')
		default:
			out = append(out, b)
		}
	}
	h.buf = out
	if _, err := h.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes a lead byte still pending; it does not close the underlying writer.
func (h *htmlControls) Close() error {
	if !h.pendingC2 {
		return nil
	}
	h.pendingC2 = false
	_, err := h.w.Write([]byte{0xC2})
	return err
}
