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
	e, err := exchangeHead(a, start, end)
	if err != nil {
		return dst, nil, err
	}
	p, err := readPayloads(a)
	if err != nil {
		return dst, nil, err
	}
	e.TraceID, e.SpanID = traceID, spanID
	dst = e.appendJSON(dst, &p)
	return dst, p.problems(), nil
}

// appendRecordObject appends the record's request or response for a body payload: its compacted
// text, or null (with the field's problem set when the text is not one strict JSON object).
func (f *payloadField) appendRecordObject(dst []byte) []byte {
	if f.usable {
		if out, ok := f.appendObject(dst); ok {
			return out
		}
	}
	return append(dst, "null"...)
}
