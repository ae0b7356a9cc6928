package capture

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/ojson"
	"github.com/gymtrace/gymtrace/semconv"
)

// AttributeLookup reads span attributes by key. The SDK exporter implements it over
// sdktrace.ReadOnlySpan attributes, the Collector exporter over pcommon.Map; it is the only thing
// [ExchangeFromAttributes] needs from a span besides its start and end times.
type AttributeLookup interface {
	// Lookup returns the value of the attribute named key, and whether it is present.
	Lookup(key string) (attribute.Value, bool)
}

// Problem is one payload attribute that could not be used whole: its record field is written as
// null and the caller marks the rollout incomplete (DESIGN.md "Payloads travel on the span").
type Problem struct {
	// Key is the payload attribute, e.g. "gymtrace.request.body".
	Key string
	// Reason says what is wrong, e.g. "cut by an attribute limit: 1024 of 5000 bytes".
	Reason string
}

// Problems lists the payload attributes [ExchangeFromAttributes] could not use.
type Problems []Problem

// Error joins the problems as "key: reason; key: reason" ("" when there are none).
func (p Problems) Error() string {
	var b strings.Builder
	for i, q := range p {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(q.Key)
		b.WriteString(": ")
		b.WriteString(q.Reason)
	}
	return b.String()
}

// sizeKey returns the byte-size attribute of a payload attribute.
func sizeKey(k attribute.Key) attribute.Key {
	sk, _ := semconv.PayloadSizeKey(k)
	return sk
}

// ExchangeAttributes returns the span attributes of a model-call record (SPEC §0 "Spans",
// DESIGN.md "Spans follow the GenAI conventions", "Payloads travel on the span"):
//
//   - gen_ai.operation.name "chat", gen_ai.provider.name from the dialect;
//   - the gen_ai.request.* parameters the request object carries (model, stream, temperature,
//     top_p, top_k, max_tokens, seed, penalties, stop sequences, choice count,
//     previous_response.id, reasoning.level; see appendRequestAttributes);
//   - from the response object: gen_ai.response.id, .model and .finish_reasons (the string
//     finish reasons of SPEC §3.2 #9), and the gen_ai.usage.* token counts of SPEC §3.5 (input,
//     output, cache_read.input, cache-write named per [WithConventions], reasoning.output), each
//     only when known (never 0 for unknown);
//   - gen_ai.conversation.compacted = true when the request or response holds a "compaction"
//     item or content block (never false);
//   - gen_ai.response.time_to_first_chunk (seconds), http.response.status_code, error.type and
//     gymtrace.error_category, each when known;
//   - gymtrace.capture_bound.kind, .limit and .seen when the capture stopped at a bound (SPEC §0
//     D15), set together;
//   - gymtrace.model_call.id, gymtrace.dialect, gymtrace.model_ref.type/name (absent when
//     model_ref is null), gymtrace.latency_ms, gymtrace.latency_ttft_ms (when known);
//   - the payloads gymtrace.request.body / .raw and gymtrace.response.body / .raw, each with its
//     ".size" attribute in bytes, when the record's field is non-null;
//   - with [WithMessageContent], gen_ai.system_instructions, gen_ai.input.messages and
//     gen_ai.output.messages (see appendMessageAttributes).
//
// The rollout id and server.address/port are the caller's to add; times and trace ids are the
// span's. With the span's start and end times these attributes are everything
// [ExchangeFromAttributes] needs to rebuild the record exactly, whatever the options. The request
// and response facts come from [WithPayloadFacts] when they are of these very payloads, else from
// one validating walk of each object. The payload attributes share the memory of e.Request and
// e.Response (no copy of what is most of a record): those slices must not be modified once the
// attributes exist. It is safe for concurrent use.
func ExchangeAttributes(e *Exchange, opts ...AttributeOption) []attribute.KeyValue {
	return AppendExchangeAttributes(make([]attribute.KeyValue, 0, 40), e, opts...)
}

// AppendExchangeAttributes appends the attributes [ExchangeAttributes] returns to dst and returns
// the extended slice, so that a caller that hands them to a span (which copies them) can reuse one
// buffer from call to call. It is safe for concurrent use with distinct dst.
func AppendExchangeAttributes(dst []attribute.KeyValue, e *Exchange, opts ...AttributeOption) []attribute.KeyValue {
	cfg := newAttributeConfig(opts)
	attrs := append(dst,
		semconv.GenAIOperationName(semconv.GenAIOperationNameChat),
		semconv.GymtraceModelCallID(e.ModelCallID),
		semconv.GymtraceDialect(e.Dialect),
	)
	if p := semconv.ProviderForDialect(e.Dialect); p != "" {
		attrs = append(attrs, semconv.GenAIProviderName(p))
	}
	if e.ModelRef != nil {
		attrs = append(attrs,
			semconv.GymtraceModelRefType(e.ModelRef.Type),
			semconv.GymtraceModelRefName(e.ModelRef.Name))
	}
	attrs = append(attrs, semconv.GymtraceLatencyMS(e.LatencyMS))
	if e.LatencyTTFTMS != nil {
		attrs = append(attrs,
			semconv.GymtraceLatencyTTFTMS(*e.LatencyTTFTMS),
			semconv.GenAIResponseTimeToFirstChunk(*e.LatencyTTFTMS/1000))
	}
	if e.StatusCode != nil {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(*e.StatusCode))
	}
	if e.ErrorCategory != "" {
		attrs = append(attrs,
			semconv.GymtraceErrorCategory(e.ErrorCategory),
			semconv.ErrorType(e.ErrorCategory))
	}
	var req, resp *ojson.Value
	var own *PayloadFacts // the facts of payloads cfg.facts does not have, read here
	compacted := false
	if e.Request != nil {
		p, hint, ok := cfg.facts.request(e.Request)
		if !ok {
			own = new(PayloadFacts)
			ok = own.readRequest(e.Request)
			p, hint = &own.req, own.reqHint
		}
		if ok {
			if cfg.messageContent {
				if v, err := ojson.Parse(e.Request); err == nil {
					req = &v
				}
			}
			attrs = appendRequestAttributes(attrs, p, cfg.conv)
			compacted = requestCompacted(e.Request, hint, req)
		}
	}
	if e.Response != nil {
		f, usage, ok := cfg.facts.response(e.Response)
		if !ok {
			if own == nil {
				own = new(PayloadFacts)
			}
			ok = own.readResponse(e.Response)
			f, usage = &own.resp, own.respUsage
		}
		if ok {
			if cfg.messageContent {
				// The output messages need the whole response.
				if v, err := ojson.Parse(e.Response); err == nil {
					resp = &v
				}
			}
			attrs = appendResponseAttributes(attrs, f, usage, cfg.conv)
			compacted = compacted || f.Compacted
		}
	}
	if compacted {
		attrs = append(attrs, semconv.GenAIConversationCompacted(true))
	}
	if cfg.messageContent {
		attrs = appendMessageAttributes(attrs, e.Dialect, req, resp)
	}
	if b := e.CaptureBound; b != nil {
		attrs = append(attrs,
			semconv.GymtraceCaptureBoundKindKey.String(b.Kind),
			semconv.GymtraceCaptureBoundLimitKey.Int64(b.Limit),
			semconv.GymtraceCaptureBoundSeenKey.Int64(b.Seen))
	}
	attrs = appendPayload(attrs, semconv.GymtraceRequestBodyKey, e.Request)
	if e.RequestRaw != nil {
		attrs = appendPayloadString(attrs, semconv.GymtraceRequestRawKey, *e.RequestRaw)
	}
	attrs = appendPayload(attrs, semconv.GymtraceResponseBodyKey, e.Response)
	if e.ResponseRaw != nil {
		attrs = appendPayloadString(attrs, semconv.GymtraceResponseRawKey, *e.ResponseRaw)
	}
	return attrs
}

// appendPayload adds a body payload attribute that shares b's memory (no copy of what is most of a
// record; see ExchangeAttributes on not modifying the payloads afterwards).
func appendPayload(attrs []attribute.KeyValue, k attribute.Key, b []byte) []attribute.KeyValue {
	if b == nil {
		return attrs
	}
	return appendPayloadString(attrs, k, bytesText(b))
}

func appendPayloadString(attrs []attribute.KeyValue, k attribute.Key, s string) []attribute.KeyValue {
	return append(attrs, k.String(s), sizeKey(k).Int64(int64(len(s))))
}

// appendResponseAttributes adds the gen_ai.response.* attributes of f and the usage counts, read
// from usage when the walk that found f read it (nil: f.Usage is parsed).
func appendResponseAttributes(attrs []attribute.KeyValue, f *ResponseFacts, usage *ojson.Value, conv semconv.GenAIConventions) []attribute.KeyValue {
	if f.HasID {
		attrs = append(attrs, semconv.GenAIResponseID(f.ID))
	}
	if f.Model != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(f.Model))
	}
	if len(f.FinishReasons) > 0 {
		attrs = append(attrs, semconv.GenAIResponseFinishReasons(f.FinishReasons...))
	}
	if usage != nil {
		return appendTokenStats(attrs, extractTokenStats(*usage), conv)
	}
	return appendUsageAttributes(attrs, f.Usage, conv)
}

// ExchangeFromAttributes rebuilds a model-call record from its span: the attributes written by
// [ExchangeAttributes] and the span's start and end times (started_at / completed_at =
// [UnixSeconds], SPEC §0 "Durability contract"). TraceID and SpanID are left empty for the caller to
// fill from the span context.
//
// Required attributes are gymtrace.model_call.id (a non-empty string), gymtrace.dialect (a string,
// one of SPEC §3.1's dialects) and gymtrace.latency_ms (a float, or an integer); a missing or
// mistyped required attribute, a mistyped optional one, a gymtrace.error_category outside SPEC
// §3.3's list (and D3's cancelled), or a gymtrace.capture_bound.kind outside SPEC §0 D15's list, is
// an error naming the key and the value. A payload that cannot be used whole — its
// ".size" attribute disagrees with its length (cut by an attribute limit), its value is missing
// while its size is present (stripped before export), or a body is not one strict JSON object —
// is left null and reported in Problems; the caller writes the record and marks the rollout
// incomplete. A payload without a size attribute is taken as whole.
func ExchangeFromAttributes(a AttributeLookup, start, end time.Time) (Exchange, Problems, error) {
	e, err := exchangeHead(a, start, end)
	if err != nil {
		return Exchange{}, nil, err
	}
	p, err := readPayloads(a)
	if err != nil {
		return Exchange{}, nil, err
	}
	e.Request = p[reqBody].objectBytes()
	e.RequestRaw = p[reqRaw].textPtr()
	e.Response = p[respBody].objectBytes()
	e.ResponseRaw = p[respRaw].textPtr()
	return e, p.problems(), nil
}

// dialects are the values of gymtrace.dialect (SPEC §3.1).
var dialects = []string{semconv.DialectResponses, semconv.DialectChat, semconv.DialectMessages}

// errorCategories are the values of gymtrace.error_category: SPEC §3.3's complete list and D3's
// cancelled.
var errorCategories = []string{
	semconv.ErrorCategoryTimeout, semconv.ErrorCategoryRateLimit, semconv.ErrorCategoryAuth,
	semconv.ErrorCategoryNotFound, semconv.ErrorCategoryClientError, semconv.ErrorCategoryUpstreamError,
	semconv.ErrorCategoryIncomplete, semconv.ErrorCategoryStreamTruncated, semconv.ErrorCategoryCaptureParseError,
	semconv.ErrorCategoryConnection, semconv.ErrorCategoryException, semconv.ErrorCategoryCancelled,
}

// captureBoundKinds are the values of gymtrace.capture_bound.kind: SPEC §0 D15's list.
var captureBoundKinds = []string{
	semconv.CaptureBoundKindResponseBytes, semconv.CaptureBoundKindDecodedBytes,
	semconv.CaptureBoundKindDecodeRatio, semconv.CaptureBoundKindInFlightBudget,
}

// exchangeHead reads everything of the record but the payloads (see [ExchangeFromAttributes]).
func exchangeHead(a AttributeLookup, start, end time.Time) (Exchange, error) {
	var e Exchange
	var err error
	if e.ModelCallID, err = requiredString(a, semconv.GymtraceModelCallIDKey); err != nil {
		return Exchange{}, err
	}
	if e.ModelCallID == "" {
		return Exchange{}, fmt.Errorf("capture attributes: %s is empty (the record's model_call_id, its key in the rollout file, SPEC §3.1)", semconv.GymtraceModelCallIDKey)
	}
	if e.Dialect, err = requiredString(a, semconv.GymtraceDialectKey); err != nil {
		return Exchange{}, err
	}
	if !slices.Contains(dialects, e.Dialect) {
		return Exchange{}, fmt.Errorf("capture attributes: %s %q is not a dialect: want one of %s (SPEC §3.1)", semconv.GymtraceDialectKey, e.Dialect, strings.Join(dialects, ", "))
	}
	refType, hasType, err := optionalString(a, semconv.GymtraceModelRefTypeKey)
	if err != nil {
		return Exchange{}, err
	}
	refName, hasName, err := optionalString(a, semconv.GymtraceModelRefNameKey)
	if err != nil {
		return Exchange{}, err
	}
	switch {
	case hasType && hasName:
		e.ModelRef = &ModelRef{Type: refType, Name: refName}
	case hasType || hasName:
		return Exchange{}, fmt.Errorf("capture attributes: %s and %s must be set together", semconv.GymtraceModelRefTypeKey, semconv.GymtraceModelRefNameKey)
	}
	e.StartedAt = UnixSeconds(start)
	e.CompletedAt = UnixSeconds(end)
	lat, ok, err := optionalFloat(a, semconv.GymtraceLatencyMSKey)
	if err != nil {
		return Exchange{}, err
	}
	if !ok {
		return Exchange{}, fmt.Errorf("capture attributes: %s is required", semconv.GymtraceLatencyMSKey)
	}
	e.LatencyMS = lat
	if ttft, ok, err := optionalFloat(a, semconv.GymtraceLatencyTTFTMSKey); err != nil {
		return Exchange{}, err
	} else if ok {
		e.LatencyTTFTMS = &ttft
	}
	if v, ok := a.Lookup(string(semconv.HTTPResponseStatusCodeKey)); ok {
		if v.Type() != attribute.INT64 {
			return Exchange{}, typeError(semconv.HTTPResponseStatusCodeKey, v, "an integer")
		}
		n := v.AsInt64()
		if n < math.MinInt32 || n > math.MaxInt32 {
			return Exchange{}, fmt.Errorf("capture attributes: %s = %d is not an HTTP status", semconv.HTTPResponseStatusCodeKey, n)
		}
		s := int(n)
		e.StatusCode = &s
	}
	if e.ErrorCategory, _, err = optionalString(a, semconv.GymtraceErrorCategoryKey); err != nil {
		return Exchange{}, err
	}
	if e.ErrorCategory != "" && !slices.Contains(errorCategories, e.ErrorCategory) {
		return Exchange{}, fmt.Errorf("capture attributes: %s %q is not an error category: want one of %s (SPEC §3.3)", semconv.GymtraceErrorCategoryKey, e.ErrorCategory, strings.Join(errorCategories, ", "))
	}
	if e.CaptureBound, err = captureBoundAttrs(a); err != nil {
		return Exchange{}, err
	}

	return e, nil
}

// The payload attributes, in the order their problems are reported.
const (
	reqBody = iota
	reqRaw
	respBody
	respRaw
)

// payloadKeys are the attributes of reqBody, reqRaw, respBody and respRaw.
var payloadKeys = [...]attribute.Key{
	semconv.GymtraceRequestBodyKey, semconv.GymtraceRequestRawKey,
	semconv.GymtraceResponseBodyKey, semconv.GymtraceResponseRawKey,
}

// payloadField is one payload attribute of a span.
type payloadField struct {
	key     attribute.Key
	text    string   // the attribute's value
	usable  bool     // present and whole (payloadAttr)
	checked bool     // a body text its producer checked as a compact strict JSON object (CheckedBodies)
	problem *Problem // why the record's field is null although the span had something; nil if not
}

// spanPayloads are a span's four payload attributes, indexed by reqBody … respRaw.
type spanPayloads [4]payloadField

// readPayloads reads the payload attributes and checks each against its size attribute; a
// mistyped attribute is an error.
func readPayloads(a AttributeLookup) (spanPayloads, error) {
	var p spanPayloads
	for i, k := range payloadKeys {
		p[i].key = k
		s, ok, problem, err := payloadAttr(a, k)
		if err != nil {
			return spanPayloads{}, err
		}
		p[i].text, p[i].usable, p[i].problem = s, ok, problem
	}
	return p, nil
}

// markChecked marks the body payloads whose text is exactly the producer's checked text (see
// [Span.CheckedRequest]); a text that differs in any byte, or is cut, is checked as always.
func (p *spanPayloads) markChecked(request, response string) {
	for i, text := range [...]string{reqBody: request, respBody: response} {
		if f := &p[i]; text != "" && f.usable && f.text == text {
			f.checked = true
		}
	}
}

// problems lists the fields' problems in field order (each field has at most one).
func (p *spanPayloads) problems() Problems {
	var out Problems
	for i := range p {
		if p[i].problem != nil {
			out = append(out, *p[i].problem)
		}
	}
	return out
}

// textPtr returns the text of a raw payload for the record, nil when unusable.
func (f *payloadField) textPtr() *string {
	if !f.usable {
		return nil
	}
	s := f.text
	return &s
}

// objectBytes returns the text of a body payload as a record object (compact strict JSON object
// text, SPEC §0 D6), or nil — with a problem when it is not one.
func (f *payloadField) objectBytes() []byte {
	if !f.usable {
		return nil
	}
	out, ok := f.appendObject(make([]byte, 0, len(f.text)))
	if !ok {
		return nil
	}
	return out
}

// appendObject appends the text of a usable body payload to dst as a record object, compacted
// straight from the attribute's string. When it is not one strict JSON object it returns dst
// unchanged and false, and sets the field's problem.
func (f *payloadField) appendObject(dst []byte) ([]byte, bool) {
	if f.checked {
		return append(dst, f.text...), true
	}
	if len(f.text) == 0 || f.text[0] != '{' {
		f.problem = &Problem{Key: string(f.key), Reason: "not a JSON object"}
		return dst, false
	}
	out, err := ojson.CompactString(dst, f.text, PayloadMaxDepth)
	if err != nil {
		f.problem = &Problem{Key: string(f.key), Reason: "not a JSON object: " + err.Error()}
		return dst, false
	}
	return out, true
}

// checkObject sets the problem of a usable body payload that is not one strict JSON object, as
// appendObject would, without writing anything.
func (f *payloadField) checkObject() {
	if !f.usable || f.problem != nil || f.checked {
		return
	}
	if len(f.text) == 0 || f.text[0] != '{' {
		f.problem = &Problem{Key: string(f.key), Reason: "not a JSON object"}
		return
	}
	if _, err := ojson.CheckCompactString(f.text, PayloadMaxDepth); err != nil {
		f.problem = &Problem{Key: string(f.key), Reason: "not a JSON object: " + err.Error()}
	}
}

// payloadAttr reads a payload attribute and checks it against its size attribute: ok when it is
// present and whole, else a problem when the span had one but it cannot be used.
func payloadAttr(a AttributeLookup, k attribute.Key) (s string, ok bool, problem *Problem, err error) {
	v, hasValue := a.Lookup(string(k))
	if hasValue && v.Type() != attribute.STRING {
		return "", false, nil, typeError(k, v, "a string")
	}
	sz, hasSize := a.Lookup(string(sizeKey(k)))
	if hasSize && sz.Type() != attribute.INT64 {
		return "", false, nil, typeError(sizeKey(k), sz, "an integer")
	}
	switch {
	case !hasValue && !hasSize:
		return "", false, nil, nil
	case !hasValue:
		return "", false, &Problem{Key: string(k), Reason: fmt.Sprintf("missing although %s is %d", sizeKey(k), sz.AsInt64())}, nil
	case hasSize && int64(len(v.AsString())) != sz.AsInt64():
		return "", false, &Problem{Key: string(k), Reason: fmt.Sprintf("cut by an attribute limit: %d of %d bytes", len(v.AsString()), sz.AsInt64())}, nil
	}
	return v.AsString(), true, nil, nil
}

// captureBoundAttrs reads gymtrace.capture_bound.kind, .limit and .seen (SPEC §0 D15): all three or
// none (nil), the kind one of D15's list (captureBoundKinds).
func captureBoundAttrs(a AttributeLookup) (*CaptureBound, error) {
	kind, hasKind, err := optionalString(a, semconv.GymtraceCaptureBoundKindKey)
	if err != nil {
		return nil, err
	}
	limit, hasLimit, err := optionalInt(a, semconv.GymtraceCaptureBoundLimitKey)
	if err != nil {
		return nil, err
	}
	seen, hasSeen, err := optionalInt(a, semconv.GymtraceCaptureBoundSeenKey)
	if err != nil {
		return nil, err
	}
	switch {
	case hasKind && hasLimit && hasSeen:
		if !slices.Contains(captureBoundKinds, kind) {
			return nil, fmt.Errorf("capture attributes: %s %q is not a capture bound kind: want one of %s (SPEC §0 D15)", semconv.GymtraceCaptureBoundKindKey, kind, strings.Join(captureBoundKinds, ", "))
		}
		return &CaptureBound{Kind: kind, Limit: limit, Seen: seen}, nil
	case hasKind || hasLimit || hasSeen:
		return nil, fmt.Errorf("capture attributes: %s, %s and %s must be set together", semconv.GymtraceCaptureBoundKindKey, semconv.GymtraceCaptureBoundLimitKey, semconv.GymtraceCaptureBoundSeenKey)
	}
	return nil, nil
}

func optionalInt(a AttributeLookup, k attribute.Key) (int64, bool, error) {
	v, ok := a.Lookup(string(k))
	if !ok {
		return 0, false, nil
	}
	if v.Type() != attribute.INT64 {
		return 0, false, typeError(k, v, "an integer")
	}
	return v.AsInt64(), true, nil
}

func requiredString(a AttributeLookup, k attribute.Key) (string, error) {
	s, ok, err := optionalString(a, k)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("capture attributes: %s is required", k)
	}
	return s, nil
}

func optionalString(a AttributeLookup, k attribute.Key) (string, bool, error) {
	v, ok := a.Lookup(string(k))
	if !ok {
		return "", false, nil
	}
	if v.Type() != attribute.STRING {
		return "", false, typeError(k, v, "a string")
	}
	return v.AsString(), true, nil
}

func optionalFloat(a AttributeLookup, k attribute.Key) (float64, bool, error) {
	v, ok := a.Lookup(string(k))
	if !ok {
		return 0, false, nil
	}
	switch v.Type() {
	case attribute.FLOAT64:
		f := v.AsFloat64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false, fmt.Errorf("capture attributes: %s = %v is not a finite number", k, f)
		}
		return f, true, nil
	case attribute.INT64:
		return float64(v.AsInt64()), true, nil
	}
	return 0, false, typeError(k, v, "a number")
}

func typeError(k attribute.Key, v attribute.Value, want string) error {
	return fmt.Errorf("capture attributes: %s must be %s, got %s", k, want, strings.ToLower(v.Type().String()))
}

// appendUsageAttributes adds the gen_ai.usage.* counts of the response's usage (SPEC §3.5 rules:
// input includes Anthropic cache reads and writes; cache_read is the cached-token count), each only
// when known. The cache-write count is named per conv.
func appendUsageAttributes(attrs []attribute.KeyValue, usageText []byte, conv semconv.GenAIConventions) []attribute.KeyValue {
	usage, ok := rawValue(usageText)
	if !ok {
		return attrs
	}
	return appendTokenStats(attrs, extractTokenStats(usage), conv)
}

// appendTokenStats adds the gen_ai.usage.* counts of st.
func appendTokenStats(attrs []attribute.KeyValue, st tokenStats, conv semconv.GenAIConventions) []attribute.KeyValue {
	for _, c := range []struct {
		k attribute.Key
		v *int64
	}{
		{semconv.GenAIUsageInputTokensKey, st.TokensIn},
		{semconv.GenAIUsageOutputTokensKey, st.TokensOut},
		{semconv.GenAIUsageCacheReadInputTokensKey, st.CachedTokens},
		{conv.UsageCacheWriteInputTokensKey(), st.CacheCreationTokens},
		{semconv.GenAIUsageReasoningOutputTokensKey, st.TokensReasoning},
	} {
		if c.v != nil {
			attrs = append(attrs, c.k.Int64(*c.v))
		}
	}
	return attrs
}
