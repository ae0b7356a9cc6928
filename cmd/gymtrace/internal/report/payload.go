package report

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/capture"
)

// payloadKeeper turns records' payload fields into display text within the per-payload bound max
// (0: keep none) and the report's remaining budget, in bytes.
type payloadKeeper struct {
	max    int
	budget int64
}

// keep returns the payloads of rec: request (or request_raw), response, response_raw.
func (k *payloadKeeper) keep(rec *capture.ModelCallRecord) []Payload {
	if k.max <= 0 {
		return nil
	}
	var out []Payload
	switch {
	case rec.Request != nil:
		out = append(out, k.jsonPayload("request", rec.Request))
	case rec.RequestRaw != nil:
		out = append(out, k.cut("request_raw", *rec.RequestRaw, len(*rec.RequestRaw)))
	}
	if rec.Response != nil {
		out = append(out, k.jsonPayload("response", rec.Response))
	}
	if rec.ResponseRaw != nil {
		out = append(out, k.cut("response_raw", *rec.ResponseRaw, len(*rec.ResponseRaw)))
	}
	return out
}

// jsonPayload pretty-prints a JSON object (falling back to its text when it does not indent).
func (k *payloadKeeper) jsonPayload(name string, obj json.RawMessage) Payload {
	var b bytes.Buffer
	if err := json.Indent(&b, obj, "", "  "); err != nil {
		return k.cut(name, string(obj), len(obj))
	}
	return k.cut(name, b.String(), len(obj))
}

// cut bounds text to max bytes (on a UTF-8 boundary) and charges the budget.
func (k *payloadKeeper) cut(name, text string, size int) Payload {
	p := Payload{Name: name, Size: size}
	if k.budget <= 0 {
		p.Omitted = true
		return p
	}
	if len(text) > k.max {
		n := k.max
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text, p.Truncated = text[:n], true
	}
	k.budget -= int64(len(text))
	p.Text = text
	return p
}
