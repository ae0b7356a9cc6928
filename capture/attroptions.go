package capture

import "github.com/gymtrace/gymtrace/semconv"

// AttributeOption configures [ExchangeAttributes]. Build options once (at construction) and reuse
// them for every call.
type AttributeOption func(*attributeConfig)

type attributeConfig struct {
	conv           semconv.GenAIConventions
	messageContent bool
	facts          *PayloadFacts
}

func newAttributeConfig(opts []AttributeOption) attributeConfig {
	var c attributeConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithConventions selects the GenAI conventions version of the attributes where versions differ
// (default [semconv.GenAIConventionsV1_41]; see [semconv.GenAIConventions]). It never changes the
// attributes [ExchangeFromAttributes] reads, so records rebuild the same under either version.
func WithConventions(c semconv.GenAIConventions) AttributeOption {
	return func(cfg *attributeConfig) { cfg.conv = c }
}

// WithMessageContent adds the opt-in content attributes gen_ai.system_instructions,
// gen_ai.input.messages and gen_ai.output.messages (JSON strings per the conventions' message JSON
// schemas) when on is true (default false: they repeat the user content of the payloads in a form
// trace UIs show). They are derived from the record's request and response and are not needed to
// rebuild the record.
func WithMessageContent(on bool) AttributeOption {
	return func(cfg *attributeConfig) { cfg.messageContent = on }
}

// WithPayloadFacts makes [ExchangeAttributes] read the request and response facts from f, found by
// the pass that split the bodies ([PayloadFacts.RequestPayload], [PayloadFacts.ResponsePayload],
// [PayloadFacts.SetStreamResponse]), instead of walking the payloads again. Facts of a payload other
// than the exchange's (the same memory, not only the same text) are ignored. Default: none, each
// payload is walked once.
func WithPayloadFacts(f *PayloadFacts) AttributeOption {
	return func(cfg *attributeConfig) { cfg.facts = f }
}
