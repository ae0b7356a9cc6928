package stream

import (
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// parseObject parses one event's data as strict JSON (SPEC §0 D6) and reports whether it is an
// object. Ill-formed UTF-8 is first replaced by U+FFFD, as the reference decodes the body with
// errors="replace" before json.loads (SPEC §4.3). Data that strict JSON refuses but json.loads
// reads (NaN, Infinity — a -Infinity log prob, say — or an integer beyond 64 bits) is read as
// json.loads reads it (python.Loads: NaN and Infinity as null, as orjson writes them), so the
// event is kept as the reference keeps it instead of being skipped.
func parseObject(data []byte) (ojson.Value, bool) {
	return parseObjectWith(ojson.Parse, data)
}

// parseObjectWith is parseObject with the given strict parser (e.g. a reusing [ojson.Parser]'s).
func parseObjectWith(parse func([]byte) (ojson.Value, error), data []byte) (ojson.Value, bool) {
	v, err := parse(data)
	if err != nil && !utf8.Valid(data) {
		v, err = parse(ojson.AppendValidUTF8(make([]byte, 0, len(data)+8), data))
	}
	if err != nil {
		v, err = python.Loads(data)
	}
	if err != nil || v.Kind() != ojson.KindObject {
		return ojson.Value{}, false
	}
	return v, true
}

// getString returns obj[key] when it is a string.
func getString(obj ojson.Value, key string) (string, bool) {
	v, ok := obj.Get(key)
	if !ok {
		return "", false
	}
	return v.AsString()
}

// getObject returns obj[key] when it is an object.
func getObject(obj ojson.Value, key string) (ojson.Value, bool) {
	v, ok := obj.Get(key)
	if !ok || v.Kind() != ojson.KindObject {
		return ojson.Value{}, false
	}
	return v, true
}

// getTruthy returns obj[key] when it is present and truthy in Python's sense.
func getTruthy(obj ojson.Value, key string) (ojson.Value, bool) {
	v, ok := obj.Get(key)
	if !ok || !python.Truthy(v) {
		return ojson.Value{}, false
	}
	return v, true
}

// index reads an index member as SPEC §4.5/§4.6 and D9 key state: absent or null gives def, an
// integer that fits int64 itself; anything else is rejected (ok false: the caller skips the item).
func index(obj ojson.Value, key string, def int64) (int64, bool) {
	v, ok := obj.Get(key)
	if !ok || v.IsNull() {
		return def, true
	}
	return v.Int64()
}
