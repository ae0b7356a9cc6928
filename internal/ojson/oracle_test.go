package ojson

import "fmt"

// oracleCompact is the compaction ojson's own parser did before jsontext took it over (compact.go),
// kept as the differential tests' reference: the old parser's walk over the structure, with the
// strict parser's string and number readers (which it shared, unchanged). It appends src to dst
// with the whitespace between tokens removed, or only checks when discard is set; spaced reports
// whether there was any. On error dst is returned unchanged.
func oracleCompact(dst, src []byte, maxDepth int, discard bool) (out []byte, spaced bool, err error) {
	o := oracle{parser: parser{data: src, src: string(src), maxDepth: maxDepth, mode: modeStrict}, out: dst, discard: discard}
	o.skipWS()
	if err := o.value(); err != nil {
		return dst, false, err
	}
	o.skipWS()
	if o.pos != len(src) {
		return dst, false, o.fail("data after the top-level value")
	}
	return o.out, o.spaced, nil
}

type oracle struct {
	parser
	out     []byte
	discard bool
	spaced  bool
}

func (o *oracle) emit(b ...byte) {
	if !o.discard {
		o.out = append(o.out, b...)
	}
}

func (o *oracle) skipWS() {
	for o.pos < len(o.data) && isJSONSpace(o.data[o.pos]) {
		o.pos++
		o.spaced = true
	}
}

func (o *oracle) value() error {
	if o.pos >= len(o.data) {
		return o.fail("unexpected end of input")
	}
	start := o.pos
	switch c := o.data[o.pos]; {
	case c == '{' || c == '[':
		return o.container(c)
	case c == '"':
		if _, err := o.str(); err != nil {
			return err
		}
	case c == 't' || c == 'f' || c == 'n':
		lit := map[byte]string{'t': "true", 'f': "false", 'n': "null"}[c]
		if !o.hasPrefix(lit) {
			return o.fail("invalid literal, expected " + lit)
		}
		o.pos += len(lit)
	case c == '-' || c >= '0' && c <= '9':
		if _, err := o.number(); err != nil {
			return err
		}
	default:
		return o.fail(fmt.Sprintf("invalid character %q looking for a value", c))
	}
	o.emit(o.data[start:o.pos]...)
	return nil
}

func (o *oracle) container(open byte) error {
	if err := o.enter(); err != nil {
		return err
	}
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	o.pos++
	o.emit(open)
	o.skipWS()
	if o.pos < len(o.data) && o.data[o.pos] == closing {
		o.pos++
		o.depth--
		o.emit(closing)
		return nil
	}
	for {
		o.skipWS()
		if open == '{' {
			if o.pos >= len(o.data) || o.data[o.pos] != '"' {
				return o.fail("expected a string object key")
			}
			if err := o.value(); err != nil {
				return err
			}
			o.skipWS()
			if o.pos >= len(o.data) || o.data[o.pos] != ':' {
				return o.fail("expected ':' after object key")
			}
			o.pos++
			o.emit(':')
			o.skipWS()
		}
		if err := o.value(); err != nil {
			return err
		}
		o.skipWS()
		if o.pos >= len(o.data) {
			return o.fail("unexpected end of input")
		}
		switch o.data[o.pos] {
		case closing:
			o.pos++
			o.depth--
			o.emit(closing)
			return nil
		case ',':
			o.pos++
			o.emit(',')
		default:
			return o.fail("expected ',' or '" + string(closing) + "'")
		}
	}
}
