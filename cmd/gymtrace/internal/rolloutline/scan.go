package rolloutline

import "fmt"

// scanner walks JSON text that json.Valid has accepted, finding where strings and values end. It
// still checks every bound, so a bug or unexpected input ends in an error, never a panic.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) errorf(what string) error {
	return fmt.Errorf("rolloutline: parse: %s at offset %d", what, s.i)
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) consume(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end checks that only whitespace follows the object.
func (s *scanner) end() error {
	s.skipSpace()
	if s.i != len(s.b) {
		return s.errorf("unexpected data after the object")
	}
	return nil
}

// skipString moves past a JSON string starting at s.i.
func (s *scanner) skipString() bool {
	if !s.consume('"') {
		return false
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
		case '"':
			s.i++
			return true
		default:
			s.i++
		}
	}
	return false
}

// skipValue moves past one JSON value starting at s.i.
func (s *scanner) skipValue() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		return s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.skipString() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default:
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}
