package capture

import "time"

// AppendLineFromAttributes appends to dst the capture line of the record that
// [ExchangeFromAttributes] rebuilds from a model-call span, with traceID and spanID as its
// trace_id and span_id: the same bytes as ex.AppendJSON after setting ex.TraceID and ex.SpanID,
// and the same Problems and errors. It is the exporters' path: the payload attributes, which are
// most of a record, are checked and compacted from the attribute strings straight into dst
// (SPEC §0 D6), never copied in between. On error dst is returned unchanged. It is safe for
// concurrent use.
func AppendLineFromAttributes(dst []byte, a AttributeLookup, start, end time.Time, traceID, spanID string) ([]byte, Problems, error) {
	l, err := NewSpanLine(a, start, end, traceID, spanID)
	if err != nil {
		return dst, nil, err
	}
	dst = l.AppendTo(dst)
	return dst, l.Problems(), nil
}

// appendRecordObject appends the record's request or response for a body payload: its compacted
// text, or null (with the field's problem set when the text is not one strict JSON object). With
// sink set, the object goes out through it in pieces.
func (f *payloadField) appendRecordObject(dst []byte, sink *lineSink) []byte {
	if sink != nil {
		return sink.appendObject(dst, f)
	}
	if f.usable {
		if out, ok := f.appendObject(dst); ok {
			return out
		}
	}
	return append(dst, "null"...)
}

// lineSizeHint estimates the bytes the payloads take in a record line, so that the line is
// allocated once instead of grown (and copied) step by step: objects are copied compact, raw texts
// are escaped (an SSE text's quotes and newlines add about one byte in eight), plus room for the
// record's other fields.
func (p *spanPayloads) lineSizeHint() int {
	n := 1 << 10
	for i := range p {
		if p[i].usable {
			n += len(p[i].text)
			if i == reqRaw || i == respRaw {
				n += len(p[i].text) / 8
			}
		}
	}
	return n
}
