package proxy

import (
	"os"
	"sync"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/semconv"
)

// spanAttrConfig selects the optional parts of the model-call span attributes, resolved once.
type spanAttrConfig struct {
	messageContent bool
	conv           semconv.GenAIConventions
	convSet        bool                    // WithGenAIConventions given: the environment is not read
	getenv         func(key string) string // test hook; nil means os.Getenv

	opts []capture.AttributeOption // resolved by resolve
}

// resolve reads OTEL_SEMCONV_STABILITY_OPT_IN unless WithGenAIConventions was given, and builds the
// attribute options every call reuses.
func (c *spanAttrConfig) resolve() {
	if !c.convSet {
		getenv := c.getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		c.conv = semconv.ParseGenAIConventions(getenv(semconv.StabilityOptInEnv))
	}
	c.opts = []capture.AttributeOption{capture.WithConventions(c.conv), capture.WithMessageContent(c.messageContent)}
}

// callAttrBufs holds idle attribute buffers of model-call spans. A span copies the attributes it
// is given (the SDK's SetAttributes appends them to its own slice), so one call's buffer serves
// the next once the call has read it for the span name and the metrics: the 40-odd attributes
// of a call then allocate no slice of their own.
var callAttrBufs = sync.Pool{New: func() any {
	b := make([]attribute.KeyValue, 0, 48)
	return &b
}}

// getCallAttrs returns an empty attribute buffer; give it back with putCallAttrs.
func getCallAttrs() *[]attribute.KeyValue { return callAttrBufs.Get().(*[]attribute.KeyValue) }

// putCallAttrs returns attrs, the slice last built on b, for reuse. The values are cleared first,
// so that an idle buffer holds no payload alive.
func putCallAttrs(b *[]attribute.KeyValue, attrs []attribute.KeyValue) {
	clear(attrs)
	*b = attrs[:0]
	callAttrBufs.Put(b)
}

// WithMessageContent makes every model-call span carry the conversation as the GenAI conventions'
// opt-in content attributes when on is true: gen_ai.input.messages, gen_ai.output.messages and
// gen_ai.system_instructions, JSON strings following the conventions' message JSON schemas (role
// and parts: text, tool_call, tool_call_response, reasoning, blob/uri/file), for all three dialects.
// Default false: the content is user data, and the capture record never needs it (it keeps the
// payloads). The attributes are not payloads: exporter.WithoutPayloads keeps them, so turn this on
// only where the trace backend may hold the conversation.
func WithMessageContent(on bool) Option {
	return optionFunc(func(c *config) { c.spanAttrs.messageContent = on })
}

// WithGenAIConventions fixes the GenAI conventions version of the model-call spans (see
// semconv.GenAIConventions: gen_ai.usage.cache_creation.input_tokens under v1.41.0,
// gen_ai.usage.cache_write.input_tokens under the latest experimental conventions). Default: read once
// at construction from OTEL_SEMCONV_STABILITY_OPT_IN (semconv.GenAIConventionsFromEnv); this option
// takes precedence over the environment. Capture records are the same under either version. A
// value that is not one of the two versions is an error of [CaptureHandler] and [New].
func WithGenAIConventions(conv semconv.GenAIConventions) Option {
	return optionFunc(func(c *config) {
		c.spanAttrs.conv = conv
		c.spanAttrs.convSet = true
	})
}

// withGetenv replaces the environment lookup used to resolve the conventions version (tests).
func withGetenv(f func(string) string) Option {
	return optionFunc(func(c *config) { c.spanAttrs.getenv = f })
}
