package capture

import (
	"sync"

	"go.opentelemetry.io/otel/trace"
)

// CheckedBodies is the set of model-call spans of this process whose producer has itself checked
// the body payloads (gymtrace.request.body and gymtrace.response.body) to be compact strict JSON
// objects (SPEC §0 D6), keyed by span ID. The capture proxy, whose one pass per body splits it for
// the record and reads the attributes' facts, registers each of its spans here before ending it;
// the process's durable writer (exporter.WithCheckedBodies) then copies those payloads into the
// line instead of checking them a second time.
//
// Only a payload attribute whose text is identical to the registered text skips the check, so a
// span ID that another producer happens to reuse cannot make an unchecked text pass: an identical
// text was checked. Register with Add before the span ends and Remove once it has; the zero value
// is empty and ready. It is safe for concurrent use.
type CheckedBodies struct {
	mu sync.Mutex
	m  map[trace.SpanID]checkedBody
}

// checkedBody holds the texts of one span's checked request and response objects ("" for none).
type checkedBody struct{ request, response string }

// Add registers span id's request and response objects as checked; either may be nil (none
// checked). The texts are kept as they are, not copied: they must not change until Remove.
func (c *CheckedBodies) Add(id trace.SpanID, request, response []byte) {
	b := checkedBody{request: bytesText(request), response: bytesText(response)}
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[trace.SpanID]checkedBody)
	}
	c.m[id] = b
	c.mu.Unlock()
}

// Remove forgets span id.
func (c *CheckedBodies) Remove(id trace.SpanID) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

// lookup returns span id's checked texts, "" when it has none. A nil c has none.
func (c *CheckedBodies) lookup(id trace.SpanID) checkedBody {
	if c == nil {
		return checkedBody{}
	}
	c.mu.Lock()
	b := c.m[id]
	c.mu.Unlock()
	return b
}

// SetChecked sets s.CheckedRequest and s.CheckedResponse to what c holds for s's span ID; a nil c
// or an unregistered span leaves them "".
func (c *CheckedBodies) SetChecked(s *Span) {
	b := c.lookup(s.SpanID)
	s.CheckedRequest, s.CheckedResponse = b.request, b.response
}
