/**
 * The LLM profiles on request and response bodies shaped as the providers document them, read
 * whole (JSON, text, bytes) and streamed (server-sent events).
 */
import { assert, describe, it } from "@effect/vitest"
import { Llm } from "@sluice/http"
import { Headers, HttpClientRequest } from "effect/http"

const chat = HttpClientRequest.post("/v1/chat/completions").pipe(HttpClientRequest.bodyJsonUnsafe({
  model: "gpt-4o-mini",
  max_tokens: 64,
  messages: [{ role: "system", content: "Be brief." }, { role: "user", content: [{ type: "text", text: "Say hello" }] }]
}))
const responses = HttpClientRequest.post("/v1/responses").pipe(HttpClientRequest.bodyJsonUnsafe({
  model: "gpt-4o-mini",
  instructions: "Be brief.",
  input: "Say hello",
  max_output_tokens: 100
}))
const messages = HttpClientRequest.post("/v1/messages").pipe(HttpClientRequest.bodyJsonUnsafe({
  model: "claude-sonnet-4-5",
  max_tokens: 256,
  system: "Be brief.",
  messages: [{ role: "user", content: "Say hello" }]
}))

const answer = (body: unknown) => ({ status: 200, headers: Headers.empty, body })
const sse = (...events: ReadonlyArray<unknown>) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")

describe("Llm.openAi", () => {
  const profile = Llm.openAi()
  it("estimates the prompt's tokens (a quarter of its characters) plus the output limit", () => {
    // "system" 2, "Be brief." 3, "user" 1, "text" 1, "Say hello" 3: every string of the messages
    assert.deepStrictEqual(profile.estimate(chat), { requests: 1, tokens: 2 + 3 + 1 + 1 + 3 + 64 })
    assert.deepStrictEqual(profile.estimate(responses), { requests: 1, tokens: 3 + 3 + 100 })
    // a counter of one's own, and a request without a limit
    const exact = Llm.openAi({ countTokens: () => 1, defaultMaxOutputTokens: 10 })
    const unbounded = HttpClientRequest.post("/v1/responses").pipe(HttpClientRequest.bodyJsonUnsafe({ input: "hi" }))
    assert.deepStrictEqual(exact.estimate(unbounded), { requests: 1, tokens: 11 })
  })

  it("reads the usage of a chat completion and of a response, as JSON, text or bytes", () => {
    const completion = { id: "c", usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } }
    assert.deepStrictEqual(profile.usage(answer(completion)), { tokens: 25 })
    assert.deepStrictEqual(profile.usage(answer(JSON.stringify(completion))), { tokens: 25 })
    assert.deepStrictEqual(profile.usage(answer(new TextEncoder().encode(JSON.stringify(completion)))), { tokens: 25 })
    const response = { id: "r", usage: { input_tokens: 12, output_tokens: 30, total_tokens: 42 } }
    assert.deepStrictEqual(profile.usage(answer(response)), { tokens: 42 })
    assert.isUndefined(profile.usage(answer({ id: "no usage" })))
  })

  it("reads a stream's usage from its last event that has one", () => {
    const responseStream = sse(
      { type: "response.created", response: { id: "r" } },
      { type: "response.output_text.delta", delta: "Hi" },
      {
        type: "response.completed",
        response: { id: "r", usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } }
      }
    )
    assert.deepStrictEqual(profile.usage(answer(responseStream)), { tokens: 10 })
    const chatStream = sse({ choices: [{ delta: { content: "Hi" } }] }, {
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 }
    }) + "data: [DONE]\n\n"
    assert.deepStrictEqual(profile.usage(answer(chatStream)), { tokens: 11 })
    // without stream_options.include_usage: nothing to read, and the client says so
    assert.isUndefined(profile.usage(answer(sse({ choices: [{ delta: { content: "Hi" } }] }))))
  })
})

describe("Llm.anthropic", () => {
  const profile = Llm.anthropic()
  it("estimates system, messages and max_tokens", () => {
    assert.deepStrictEqual(profile.estimate(messages), { requests: 1, tokens: 3 + 1 + 3 + 256 })
  })

  it("reads input, cache writes and output, whole or streamed", () => {
    const message = {
      id: "m",
      usage: { input_tokens: 20, cache_creation_input_tokens: 4, cache_read_input_tokens: 100, output_tokens: 6 }
    }
    assert.deepStrictEqual(profile.usage(answer(message)), { tokens: 30 })
    const stream = sse(
      { type: "message_start", message: { id: "m", usage: { input_tokens: 25, output_tokens: 1 } } },
      { type: "content_block_delta", delta: { type: "text_delta", text: "Hi" } },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 15 } },
      { type: "message_stop" }
    )
    assert.deepStrictEqual(profile.usage(answer(stream)), { tokens: 40 })
  })
})
