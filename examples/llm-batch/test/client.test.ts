import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import * as OpenAi from "../src/OpenAi.js"
import * as Prompts from "../src/Prompts.js"
import * as Tokens from "../src/Tokens.js"

describe("the client's estimates", () => {
  const messages = [{ role: "user", content: "Summarise the following notes in two sentences." }] as const

  it("count the prompt with OpenAI's tokenizer, plus max_tokens or the expected completion", () => {
    const prompt = Tokens.promptTokens(messages)
    // 9 words and a full stop, plus the chat format's markers
    expect(prompt).toBeGreaterThan(9)
    expect(prompt).toBeLessThan(20)
    expect(Tokens.estimate(messages, 256)).toBe(prompt + 256)
    expect(Tokens.estimate(messages, 256, 40)).toBe(prompt + 40)
    expect(Tokens.estimate(messages, 256, 1_000)).toBe(prompt + 256)
  })

  it("are read from the request the OpenAI client sends, both dimensions", () => {
    const request = HttpClientRequest.post("/v1/chat/completions").pipe(
      HttpClientRequest.bodyUnsafeJson({ model: "gpt-4o-mini", messages, max_tokens: 100 })
    )
    expect(OpenAi.estimateOf(request, { maxTokens: 256, expectedCompletion: undefined })).toEqual({
      requests: 1,
      tokens: Tokens.promptTokens(messages) + 100
    })
  })

  it("the sample's prompts vary in length, the same for a seed", () => {
    const sample = Prompts.sample(50, 42)
    const lengths = sample.map((prompt) => Tokens.promptTokens(prompt.messages))
    expect(Math.min(...lengths)).toBeLessThan(60)
    expect(Math.max(...lengths)).toBeGreaterThan(250)
    expect(Prompts.sample(50, 42)).toEqual(sample)
  })

  it("keeps the client the margin under each quota, with the same burst", () => {
    expect(OpenAi.clientLimit({ limit: 12_000, burst: 1_000 }, 0.02)).toEqual({ limit: 11_760, burst: 1_000 })
  })
})
