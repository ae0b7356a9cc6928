package fakemodel

import (
	"bytes"
	"encoding/json"
)

// obj is a JSON object whose keys are written in insertion order, as the providers send them.
type obj []member

// member is one key/value pair of an obj.
type member struct {
	key   string
	value any
}

// MarshalJSON writes the members in order, without HTML escaping.
func (o obj) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := marshal(m.key)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		v, err := marshal(m.value)
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// with returns o with one more member.
func (o obj) with(key string, value any) obj {
	return append(o, member{key, value})
}

// arr is a JSON array; arr{} encodes as [] (only a nil slice would encode as null).
type arr []any

// marshal encodes v compactly without HTML escaping (the providers send "<" and "&" raw).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encoder encodes many values and keeps the first error, so builders stay linear.
type encoder struct{ err error }

// enc encodes v; after an error it returns nil and keeps that error.
func (e *encoder) enc(v any) []byte {
	if e.err != nil {
		return nil
	}
	b, err := marshal(v)
	if err != nil {
		e.err = err
		return nil
	}
	return b
}

// floatOne is the number 1.0 written as the OpenAI API writes temperature and top_p defaults.
var floatOne = json.RawMessage("1.0")
