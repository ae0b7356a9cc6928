// The e2e runner of the guide (e2e/ts_test.go runs it with node after tsc):
//
//	node dist/run.js calls <server URL> <rollout id> <direct|proxy>
//	node dist/run.js agent <proxy URL> <rollout id>
//
// "calls" makes every kind of call with the official SDKs — Chat Completions, Responses and
// Messages, streamed and not, tool turns, a 429 and an aborted stream (the fake model's faults,
// asked for with the X-E2e-Fault header) — and prints one JSON object: for each call its name,
// what the SDK gave back (result) and the X-Gymtrace-Model-Call-Id it saw. "direct" calls the
// fake model itself (same SDK options, no prefix); "proxy" uses the guide's clients.
// "agent" runs a tool-using agent with the guide's observation spans and prints the same shape.

import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";

import {
  chatWithCallId, executeTool, headerClients, invokeAgent, messageWithCallId, rolloutClients, startTracing,
} from "./guide.js";

type Call = { name: string; result: unknown; modelCallId: string | null };

const faultHeader = "X-E2e-Fault";
const question = "What is the weather in Oslo?";
const weatherParameters = {
  type: "object",
  properties: { city: { type: "string", description: "City name" }, unit: { type: "string", enum: ["c", "f"] } },
  required: ["city", "unit"],
};
const chatTools: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", description: "Current weather in a city", parameters: weatherParameters } },
];
const responsesTools: OpenAI.Responses.Tool[] = [
  { type: "function", name: "get_weather", description: "Current weather in a city", parameters: weatherParameters, strict: false },
];
const messagesTools: Anthropic.Tool[] = [
  { name: "get_weather", description: "Current weather in a city", input_schema: weatherParameters as Anthropic.Tool.InputSchema },
];

// getWeather is the agent's tool.
function getWeather(args: string | unknown): string {
  const a = (typeof args === "string" ? JSON.parse(args) : args) as { city: string; unit: string };
  return `12 ${a.unit.toUpperCase()} and sunny in ${a.city}`;
}

function callId(response: Response): string | null {
  return response.headers.get("x-gymtrace-model-call-id");
}

// collect reads a stream to its end, or to its error: the events it gave and the error's class.
async function collect(stream: AsyncIterable<unknown>) {
  const events: unknown[] = [];
  try {
    for await (const ev of stream) events.push(ev);
    return { events };
  } catch (err) {
    return { events, error: (err as Error).constructor.name };
  }
}

async function calls(openai: OpenAI, anthropic: Anthropic, named: { openai: OpenAI; anthropic: Anthropic }): Promise<Call[]> {
  const out: Call[] = [];

  // Chat Completions: a tool turn, not streamed, with the guide's helper.
  const user: OpenAI.ChatCompletionMessageParam = { role: "user", content: question };
  const first = await chatWithCallId(openai, { model: "gpt-4.1-mini", messages: [user], tools: chatTools });
  out.push({ name: "chat tool call", result: first.completion, modelCallId: first.modelCallId });
  const msg = first.completion.choices[0].message;
  const call = msg.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  const followUp: OpenAI.ChatCompletionMessageParam[] = [
    user, msg, { role: "tool", tool_call_id: call.id, content: getWeather(call.function.arguments) },
  ];
  const second = await chatWithCallId(openai, { model: "gpt-4.1-mini", messages: followUp, tools: chatTools });
  out.push({ name: "chat tool result", result: second.completion, modelCallId: second.modelCallId });

  // Chat Completions streamed, with a tool call and the usage chunk.
  {
    const { data, response } = await openai.chat.completions
      .create({ model: "gpt-4.1-mini", messages: [user], tools: chatTools, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    out.push({ name: "chat stream tool call", result: await collect(data), modelCallId: callId(response) });
  }

  // Responses: a tool turn, not streamed, then a streamed answer to the tool result.
  {
    const { data: r, response } = await openai.responses
      .create({ model: "gpt-4.1-mini", input: question, tools: responsesTools })
      .withResponse();
    out.push({ name: "responses tool call", result: r, modelCallId: callId(response) });
    const fc = r.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const input: OpenAI.Responses.ResponseInput = [
      { role: "user", content: question },
      { type: "function_call", call_id: fc.call_id, name: fc.name, arguments: fc.arguments },
      { type: "function_call_output", call_id: fc.call_id, output: getWeather(fc.arguments) },
    ];
    const s = await openai.responses.create({ model: "gpt-4.1-mini", input, tools: responsesTools, stream: true }).withResponse();
    out.push({ name: "responses stream tool result", result: await collect(s.data), modelCallId: callId(s.response) });
  }

  // Messages: a tool turn with the guide's helper, then the answer streamed.
  {
    const user: Anthropic.MessageParam = { role: "user", content: question };
    const m = await messageWithCallId(anthropic, { model: "claude-sonnet-4-5", max_tokens: 512, messages: [user], tools: messagesTools });
    out.push({ name: "messages tool call", result: m.message, modelCallId: m.modelCallId });
    const use = m.message.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use")!;
    const messages: Anthropic.MessageParam[] = [
      user,
      { role: "assistant", content: m.message.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: getWeather(use.input) }] },
    ];
    const s = await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 512, messages, tools: messagesTools, stream: true }).withResponse();
    out.push({ name: "messages stream tool result", result: await collect(s.data), modelCallId: callId(s.response) });
  }

  // A 429: the SDK's RateLimitError with the provider's error body.
  try {
    await openai.chat.completions.create({ model: "gpt-4.1-mini", messages: [user] }, { headers: { [faultHeader]: "rate_limit" } });
    throw new Error("the 429 call succeeded");
  } catch (err) {
    if (!(err instanceof OpenAI.RateLimitError)) throw err;
    out.push({ name: "chat 429", result: { status: err.status, error: err.error }, modelCallId: err.headers.get("x-gymtrace-model-call-id") });
  }

  // A stream the server breaks after two events: the SDK's iteration fails.
  {
    const { data, response } = await anthropic.messages
      .create({ model: "claude-sonnet-4-5", max_tokens: 512, messages: [{ role: "user", content: "Name a primary colour." }], stream: true },
        { headers: { [faultHeader]: "abort2" } })
      .withResponse();
    const got = await collect(data);
    if (!got.error) throw new Error("the aborted stream ended cleanly");
    out.push({ name: "messages stream aborted", result: got, modelCallId: callId(response) });
  }

  // The rollout named by header (Chat) and by baggage (Messages) instead of the path prefix.
  const h = await chatWithCallId(named.openai, { model: "gpt-4.1-mini", messages: [{ role: "user", content: "Name a primary colour." }] });
  out.push({ name: "chat named by header", result: h.completion, modelCallId: h.modelCallId });
  const b = await messageWithCallId(named.anthropic, { model: "claude-sonnet-4-5", max_tokens: 256, messages: [{ role: "user", content: "Name a primary colour." }] });
  out.push({ name: "messages named by baggage", result: b.message, modelCallId: b.modelCallId });
  return out;
}

// agent is a tool-using agent: an invocation whose first model call asks for get_weather, the
// tool's execute_tool span, and the call that answers with the tool result.
async function agent(proxyURL: string, rolloutId: string): Promise<Call[]> {
  const sdk = startTracing();
  const { openai } = rolloutClients(proxyURL, rolloutId);
  const out: Call[] = [];
  try {
    await invokeAgent(rolloutId, "weather-agent", async (headers, called) => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: question }];
      for (;;) {
        const { data, response } = await openai.chat.completions
          .create({ model: "gpt-4.1-mini", messages, tools: chatTools }, { headers })
          .withResponse();
        const id = callId(response)!;
        called(id);
        out.push({ name: `agent turn ${out.length}`, result: data, modelCallId: id });
        const msg = data.choices[0].message;
        if (!msg.tool_calls?.length) return;
        messages.push(msg);
        for (const tc of msg.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[]) {
          const result = await executeTool(rolloutId, tc.function.name, tc.id, async () => getWeather(tc.function.arguments));
          messages.push({ role: "tool", tool_call_id: tc.id, content: result });
        }
      }
    });
  } finally {
    await sdk.shutdown();
  }
  return out;
}

async function main() {
  const [mode, url, rolloutId, how] = process.argv.slice(2);
  let out: Call[];
  if (mode === "calls" && (how === "direct" || how === "proxy")) {
    const c = how === "proxy" ? rolloutClients(url, rolloutId) : {
      openai: new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 }),
      anthropic: new Anthropic({ baseURL: url, apiKey: "unused", maxRetries: 0 }),
    };
    out = await calls(c.openai, c.anthropic, headerClients(url, rolloutId));
  } else if (mode === "agent") {
    out = await agent(url, rolloutId);
  } else {
    throw new Error(`usage: run.js calls URL ROLLOUT_ID direct|proxy | run.js agent URL ROLLOUT_ID (got ${process.argv.slice(2).join(" ")})`);
  }
  process.stdout.write(JSON.stringify({ calls: out }) + "\n");
}

await main();
