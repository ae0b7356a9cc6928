// The TypeScript part of the README's guide "Agents in any language". The README includes each
// `#region guide-*` of this file verbatim (e2e/guide_test.go fails when they differ), and
// e2e/ts/src/run.ts calls these functions against the real proxy, so the guide is what CI runs.

// #region guide-imports
import { createHash } from "node:crypto";

import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { context, propagation, trace, TraceFlags, type Context } from "@opentelemetry/api";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
// #endregion

// #region guide-trace
// The rollout's trace (DESIGN.md "Trace per rollout"): of SHA-256("gymtrace/rollout/<id>"),
// bytes 0-15 are the trace id and bytes 16-23 the span id of the rollout's root span.
export function rolloutTrace(rolloutId: string) {
  const digest = createHash("sha256").update(`gymtrace/rollout/${rolloutId}`).digest("hex");
  const traceId = digest.slice(0, 32);
  const rootSpanId = digest.slice(32, 48);
  return { traceId, rootSpanId, traceparent: `00-${traceId}-${rootSpanId}-01` };
}
// #endregion

// #region guide-clients
// The rollout is named by the path prefix /ng-rollout/<id>. The OpenAI SDK wants the prefix plus
// /v1; the Anthropic SDK adds /v1 itself. traceparent puts every call into the rollout's trace.
export function rolloutClients(proxyURL: string, rolloutId: string) {
  const prefix = `${proxyURL}/ng-rollout/${rolloutId}`;
  const defaultHeaders = { traceparent: rolloutTrace(rolloutId).traceparent };
  return {
    openai: new OpenAI({ baseURL: `${prefix}/v1`, apiKey: process.env.OPENAI_API_KEY ?? "unused", defaultHeaders, maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: prefix, apiKey: process.env.ANTHROPIC_API_KEY ?? "unused", defaultHeaders, maxRetries: 0 }),
  };
}
// #endregion

// #region guide-naming
// Without the prefix: the header x-gymtrace-rollout-id, or the W3C baggage member
// gymtrace.rollout_id (the prefix wins, then the header, then baggage).
export function headerClients(proxyURL: string, rolloutId: string) {
  return {
    openai: new OpenAI({ baseURL: `${proxyURL}/v1`, apiKey: "unused", maxRetries: 0,
      defaultHeaders: { "x-gymtrace-rollout-id": rolloutId } }),
    anthropic: new Anthropic({ baseURL: proxyURL, apiKey: "unused", maxRetries: 0,
      defaultHeaders: { baggage: `gymtrace.rollout_id=${encodeURIComponent(rolloutId)}` } }),
  };
}
// #endregion

// #region guide-model-call-id
// The proxy answers every captured call with X-Gymtrace-Model-Call-Id, the model_call_id of its
// record. Both SDKs hand out the raw response with .withResponse() (streams too).
export async function chatWithCallId(client: OpenAI, params: OpenAI.ChatCompletionCreateParamsNonStreaming) {
  const { data, response } = await client.chat.completions.create(params).withResponse();
  return { completion: data, modelCallId: response.headers.get("x-gymtrace-model-call-id") };
}

export async function messageWithCallId(client: Anthropic, params: Anthropic.MessageCreateParamsNonStreaming) {
  const { data, response } = await client.messages.create(params).withResponse();
  return { message: data, modelCallId: response.headers.get("x-gymtrace-model-call-id") };
}
// #endregion

// #region guide-observations
// Observation spans with the GenAI conventions, exported over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT)
// to a gymtrace Collector whose gymcapture exporter has `observations: true`. Run the agent with
// OTEL_RESOURCE_ATTRIBUTES=gymtrace.rollout.id=<id>; the spans carry the attribute too.
export function startTracing() {
  const sdk = new NodeSDK({ traceExporter: new OTLPTraceExporter() });
  sdk.start();
  return sdk; // await sdk.shutdown() before exiting: it flushes the spans
}

const tracer = trace.getTracer("my-agent");

// Runs fn as an invoke_agent span under the rollout's root span; fn reports each model call's
// id, and its calls send the span's traceparent.
export async function invokeAgent<T>(rolloutId: string, agentName: string,
  fn: (headers: Record<string, string>, called: (modelCallId: string) => void) => Promise<T>) {
  const { traceId, rootSpanId } = rolloutTrace(rolloutId);
  const parent = trace.setSpanContext(context.active(),
    { traceId, spanId: rootSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
  return tracer.startActiveSpan(`invoke_agent ${agentName}`, { attributes: {
    "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agentName, "gymtrace.rollout.id": rolloutId,
  } }, parent, async (span) => {
    const ids: string[] = [];
    try {
      return await fn(traceHeaders(context.active()), (id) => {
        ids.push(id);
        span.addEvent("gymtrace.model_call", { "gymtrace.model_call.id": id });
      });
    } finally {
      span.setAttribute("gymtrace.model_call.ids", ids);
      span.end();
    }
  });
}

// Runs one tool call as an execute_tool span inside the current invocation.
export async function executeTool<T>(rolloutId: string, toolName: string, toolCallId: string, fn: () => Promise<T>) {
  return tracer.startActiveSpan(`execute_tool ${toolName}`, { attributes: {
    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": toolName,
    "gen_ai.tool.call.id": toolCallId, "gymtrace.rollout.id": rolloutId,
  } }, async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
}

function traceHeaders(ctx: Context): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(ctx, headers);
  return headers;
}
// #endregion
