/**
 * The stand-in OpenAI in its own process: chat completions with `usage` and OpenAI's rate-limit
 * headers, requests and tokens enforced on actual usage, 429 with `retry-after` past either.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Child from "../src/stand-in/Child.js"
import { PATH } from "../src/stand-in/StandIn.js"
import { testEntry } from "./utils.js"

interface Body {
  readonly object?: string
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly total_tokens: number }
  readonly error?: { readonly code: string | null; readonly type: string }
}

const post = (url: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
      body: JSON.stringify(body)
    })
    return { status: response.status, headers: response.headers, body: (await response.json()) as Body }
  })

const chat = (content: string, maxTokens: number) => ({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content }],
  max_tokens: maxTokens
})

describe("the OpenAI stand-in", () => {
  it.live(
    "answers with usage and rate-limit headers, and 429s past a quota on actual usage",
    () =>
      Effect.gen(function*() {
        const standIn = yield* Child.start(testEntry, {
          windowMillis: 60_000,
          requests: { limit: 10, burst: 0 },
          tokens: { limit: 1_000, burst: 0 },
          minCompletion: 100,
          latency: { baseMillis: 1, perTokenMillis: 0 },
          seed: 1
        })
        expect(standIn.pid).not.toBe(process.pid)
        const first = yield* post(standIn.url, chat("Say hello.", 300))
        expect(first.status).toBe(200)
        const usage = first.body.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }
        expect(usage.prompt_tokens).toBeGreaterThan(5)
        expect(usage.completion_tokens).toBeGreaterThanOrEqual(100)
        expect(usage.completion_tokens).toBeLessThanOrEqual(300)
        expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens)
        expect(first.body.object).toBe("chat.completion")
        expect(first.headers.get("x-ratelimit-limit-requests")).toBe("10")
        expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("9")
        expect(first.headers.get("x-ratelimit-limit-tokens")).toBe("1000")
        expect(first.headers.get("x-ratelimit-remaining-tokens")).toBe(String(1_000 - usage.total_tokens))
        expect(first.headers.get("x-ratelimit-reset-tokens")).toMatch(/^(59\.\d+s|1m0s|\d+ms)$/)

        // a completion of up to 900 more tokens: the server counts what it writes, so sooner or later
        // one does not fit in the 1,000; every 429 names the dimension and says when to come back
        const responses = []
        for (let i = 0; i < 4; i++) responses.push(yield* post(standIn.url, chat("Say hello.", 900)))
        const tooMany = responses.find((r) => r.status === 429)
        expect(tooMany).toBeDefined()
        expect(Number(tooMany?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        expect(tooMany?.body.error?.code).toBe("rate_limit_exceeded")
        expect(tooMany?.body.error?.type).toBe("tokens")

        const stats = yield* standIn.stats
        expect(stats.received).toBe(5)
        expect(stats.tokens.busiest).toBeLessThanOrEqual(1_000)
        expect(stats.requests.busiest).toBeLessThanOrEqual(10)
        expect(stats.tokens.rateLimited).toBe(stats.rateLimited)
        expect(stats.rateLimited).toBe(responses.filter((r) => r.status === 429).length)
        expect(stats.answered + stats.rateLimited).toBe(5)
      }).pipe(Effect.scoped),
    90_000
  )
})
