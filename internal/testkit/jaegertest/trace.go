package jaegertest

// Trace is one trace as Jaeger's query API returns it (GET /api/traces/<id>, the "data" element).
type Trace struct {
	// TraceID is the trace id in lowercase hex (32 digits for OpenTelemetry traces).
	TraceID string `json:"traceID"`
	// Spans holds the stored spans in Jaeger's order (not necessarily start order).
	Spans []Span `json:"spans"`
	// Processes maps a span's ProcessID to the resource that emitted it.
	Processes map[string]Process `json:"processes"`
	// Warnings lists Jaeger's remarks on the trace, such as clock skew; nil when none.
	Warnings []string `json:"warnings"`
}

// Span is one span of a [Trace].
type Span struct {
	// TraceID and SpanID are lowercase hex.
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
	// OperationName is the OpenTelemetry span name.
	OperationName string `json:"operationName"`
	// References links the span to its parent (RefType "CHILD_OF") and its span links ("FOLLOWS_FROM").
	References []Reference `json:"references"`
	// Flags holds the W3C trace flags (1 = sampled).
	Flags uint32 `json:"flags"`
	// StartTime is microseconds since the Unix epoch; Duration is in microseconds.
	StartTime int64 `json:"startTime"`
	Duration  int64 `json:"duration"`
	// Tags holds the span attributes plus Jaeger's own: span.kind, otel.scope.name,
	// otel.status_code, otel.status_description, error.
	Tags []KeyValue `json:"tags"`
	// Logs holds the span events.
	Logs []Log `json:"logs"`
	// ProcessID is the key of the span's process in Trace.Processes.
	ProcessID string `json:"processID"`
	// Warnings lists Jaeger's remarks on the span; nil when none.
	Warnings []string `json:"warnings"`
}

// Reference is a span's reference to another span.
type Reference struct {
	// RefType is "CHILD_OF" (the parent) or "FOLLOWS_FROM" (a span link).
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// KeyValue is one tag: an attribute with Jaeger's type name.
type KeyValue struct {
	Key string `json:"key"`
	// Type is "string", "bool", "int64", "float64" or "binary".
	Type string `json:"type"`
	// Value is a string, a bool, or a json.Number for the types int64 and float64 (int64 values keep
	// all 64 bits: Jaeger sends them as strings and decoding turns them into json.Number). Binary
	// values are base64 text; OpenTelemetry array and map attributes arrive as their JSON text.
	Value any `json:"value"`
}

// Log is one span event.
type Log struct {
	// Timestamp is microseconds since the Unix epoch.
	Timestamp int64 `json:"timestamp"`
	// Fields holds the event attributes; the event name is the field "event".
	Fields []KeyValue `json:"fields"`
}

// Process is the resource of the spans that point at it.
type Process struct {
	// ServiceName is the resource's service.name.
	ServiceName string `json:"serviceName"`
	// Tags holds the other resource attributes.
	Tags []KeyValue `json:"tags"`
}

// SpansNamed returns the spans whose OperationName is name, in the trace's order; nil when none.
func (tr *Trace) SpansNamed(name string) []Span {
	var out []Span
	for _, s := range tr.Spans {
		if s.OperationName == name {
			out = append(out, s)
		}
	}
	return out
}

// Span returns the span with the given hex span id.
func (tr *Trace) Span(spanID string) (Span, bool) {
	for _, s := range tr.Spans {
		if s.SpanID == spanID {
			return s, true
		}
	}
	return Span{}, false
}

// ProcessOf returns the process of s; false when the trace does not list it.
func (tr *Trace) ProcessOf(s Span) (Process, bool) {
	p, ok := tr.Processes[s.ProcessID]
	return p, ok
}

// Tag returns the tag named key.
func (s Span) Tag(key string) (KeyValue, bool) { return findTag(s.Tags, key) }

// ParentSpanID returns the span id of the CHILD_OF reference; "" for a root span.
func (s Span) ParentSpanID() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Tag returns the resource attribute named key.
func (p Process) Tag(key string) (KeyValue, bool) { return findTag(p.Tags, key) }

// Field returns the event attribute named key.
func (l Log) Field(key string) (KeyValue, bool) { return findTag(l.Fields, key) }

func findTag(tags []KeyValue, key string) (KeyValue, bool) {
	for _, kv := range tags {
		if kv.Key == key {
			return kv, true
		}
	}
	return KeyValue{}, false
}

// tracesResponse is the envelope of GET /api/traces/<id>.
type tracesResponse struct {
	Data   []Trace         `json:"data"`
	Errors []responseError `json:"errors"`
}

type responseError struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
}
