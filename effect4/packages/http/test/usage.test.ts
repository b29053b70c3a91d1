/**
 * Usage-based limits through the client, against real HTTP servers on 127.0.0.1: the estimate is
 * reserved, the usage the response reports is settled inside the permit, a request that never
 * reached the upstream is released, and the rate-limit headers tighten the limiter. The limiter
 * counts tokens in a fixed window of 1,000 per minute, so that what it holds is read exactly with
 * takes that must not wait (`maxWait: 0`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Llm, Middleware, ProviderHttpClient, RateLimitHeaders } from "@sluice/http"
import type { Provider } from "@sluice/provider"
import type { RateLimiter } from "@sluice/rate-limiter"
import { Duration, Effect, Exit, Logger, Schema, Stream } from "effect"
import { HttpBody, HttpClientRequest } from "effect/http"
import { TestClock } from "effect/testing"
import { room, tokensPerMinute } from "./utils/providers.js"
import { run, uniqueName } from "./utils/run.js"
import { json, testServer } from "./utils/server.js"

const Completion = Schema.Struct({ id: Schema.String })

/** Whether `tokens` more start now, without waiting (and are taken if so). */
const fits = (provider: Provider.Provider<unknown>, tokens: number) =>
  Effect.map(
    Effect.exit((provider.rateLimiter as RateLimiter.RateLimiter).take({ cost: { tokens }, maxWait: 0 })),
    Exit.isSuccess
  )

const completions = (usage: number, headers: Record<string, string> = {}) =>
  json(
    { id: "chatcmpl-1", usage: { prompt_tokens: 20, completion_tokens: usage - 20, total_tokens: usage } },
    200,
    headers
  )

const openaiUsage = ({ body }: ProviderHttpClient.UsageResponse) => ({
  tokens: (body as { readonly usage: { readonly total_tokens: number } }).usage.total_tokens
})

describe("usage", () => {
  it.live("the estimate is reserved and settled with the usage the body reports, inside the permit", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/v1/chat/completions": completions(120) })
      const provider = yield* tokensPerMinute(uniqueName("usage"), 2)
      const held: Array<number> = []
      const client = yield* ProviderHttpClient.make(provider, {
        baseUrl: server.url,
        estimate: () => ({ requests: 1, tokens: 300 }),
        usage: (response) => {
          held.push(Effect.runSync(provider.bulkhead.stats).inFlight)
          return openaiUsage(response)
        }
      })
      const post = HttpClientRequest.post("/v1/chat/completions")
      assert.deepStrictEqual(yield* client.json(post, Completion), { id: "chatcmpl-1" })
      // read while the permit was held, from the body the schema then decoded
      assert.deepStrictEqual(held, [1])
      // 300 reserved, 120 used: the unused 180 came back in the open window
      assert.strictEqual(yield* room(provider), 880)
    })))

  it.live("an upstream that counted the call and reported nothing keeps the estimate", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/v1/chat/completions": json({ error: "overloaded" }, 500) })
      const provider = yield* tokensPerMinute(uniqueName("usage-500"), 2)
      const client = yield* ProviderHttpClient.make(provider, {
        baseUrl: server.url,
        estimate: () => ({ requests: 1, tokens: 300 }),
        usage: openaiUsage
      })
      const error = yield* Effect.flip(client.json(HttpClientRequest.post("/v1/chat/completions"), Completion))
      assert.strictEqual(error._tag, "UpstreamStatus")
      assert.strictEqual(yield* room(provider), 700)
    })))

  it.live("a request whose connection was refused never reached the upstream: released", () =>
    run(Effect.gen(function*() {
      const provider = yield* tokensPerMinute(uniqueName("usage-refused"), 2)
      // port 9 (discard) on loopback: nothing listens there
      const client = yield* ProviderHttpClient.make(provider, {
        baseUrl: "http://127.0.0.1:9",
        estimate: () => ({ requests: 1, tokens: 300 }),
        usage: openaiUsage
      })
      const error = yield* Effect.flip(client.json(HttpClientRequest.post("/v1/chat/completions"), Completion))
      assert.strictEqual(error._tag, "HttpClientError")
      assert.strictEqual((error as { readonly reason: { readonly _tag: string } }).reason._tag, "TransportError")
      assert.strictEqual(yield* room(provider), 1000)
    })))

  it.live("execute and stream settle from what usage reads, the body given as it was read", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/v1/embeddings": json({ ok: true }, 200, { "x-usage-tokens": "40" }) })
      const provider = yield* tokensPerMinute(uniqueName("usage-headers-only"), 2)
      const bodies: Array<unknown> = []
      const client = yield* ProviderHttpClient.make(provider, {
        baseUrl: server.url,
        estimate: () => ({ requests: 1, tokens: 300 }),
        usage: ({ body, headers }) => {
          bodies.push(body)
          return { tokens: Number(headers["x-usage-tokens"]) }
        }
      })
      const post = HttpClientRequest.post("/v1/embeddings")
      yield* client.execute(post, (response) => Effect.asVoid(response.arrayBuffer))
      yield* Stream.runDrain(client.stream(post))
      // execute reads the body whole (parsed, it is JSON); stream gives the text that arrived
      assert.deepStrictEqual(bodies, [{ ok: true }, `{"ok":true}`])
      // 300 reserved twice, 40 used each time
      assert.strictEqual(yield* room(provider), 920)
    })))

  it.live("a request's own cost wins over the estimate", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/v1/chat/completions": completions(120) })
      const provider = yield* tokensPerMinute(uniqueName("usage-cost"), 2)
      const client = yield* ProviderHttpClient.make(provider, {
        baseUrl: server.url,
        estimate: () => ({ requests: 1, tokens: 300 })
      })
      yield* client.json(HttpClientRequest.post("/v1/chat/completions"), Completion, {
        cost: { requests: 1, tokens: 450 }
      })
      // no usage option: the cost is taken as it is, not settled
      assert.strictEqual(yield* room(provider), 550)
    })))

  it.effect("OpenAI's headers tighten the limiter: remaining 0 holds tokens for 6m0s, six minutes", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const server = yield* testServer({
        "/v1/chat/completions": completions(120, {
          // the sample of OpenAI's Rate limits guide, tokens exhausted, and a malformed value
          "x-ratelimit-limit-tokens": "1000",
          "x-ratelimit-remaining-tokens": "0",
          "x-ratelimit-reset-tokens": "6m0s",
          "x-ratelimit-remaining-requests": "-1"
        })
      })
      const provider = yield* tokensPerMinute(uniqueName("usage-headers"), 2)
      const client = yield* ProviderHttpClient.make(provider, {
        baseUrl: server.url,
        rateLimitHeaders: RateLimitHeaders.openai
      })
      yield* client.json(HttpClientRequest.post("/v1/chat/completions"), Completion).pipe(
        Effect.provide(Logger.layer([Logger.make(({ message }) => {
          logs.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
        })]))
      )
      assert.deepStrictEqual(logs, [
        `provider "${provider.name}": ignored the rate-limit header x-ratelimit-remaining-requests: "-1" (not a non-negative integer)`
      ])
      const limiter = provider.rateLimiter as RateLimiter.RateLimiter
      const refused = yield* Effect.flip(limiter.take({ cost: { tokens: 1 }, maxWait: 0 }))
      assert.strictEqual(refused._tag, "RateLimitExceeded")
      yield* TestClock.adjust(Duration.seconds(359))
      assert.isFalse(yield* fits(provider, 1))
      yield* TestClock.adjust(Duration.seconds(1))
      assert.isTrue(yield* fits(provider, 1))
      // requests were never touched
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(limiter.take({ cost: { requests: 1 }, maxWait: 0 }))))
    }).pipe(run))

  it.effect("through the middleware with Llm.openAi(): the estimate from the request, the headers tighten", () =>
    Effect.gen(function*() {
      const server = yield* testServer({
        "/v1/chat/completions": completions(120, {
          "x-ratelimit-limit-tokens": "1000",
          "x-ratelimit-remaining-tokens": "0",
          "x-ratelimit-reset-tokens": "6m0s"
        })
      })
      const provider = yield* tokensPerMinute(uniqueName("usage-middleware"), 2)
      const client = yield* Middleware.make(provider, { baseUrl: server.url, ...Llm.openAi() })
      const answer = yield* client.post("/v1/chat/completions", {
        body: HttpBody.jsonUnsafe({ model: "gpt-4o-mini", max_tokens: 50, messages: [{ role: "user", content: "hi" }] })
      }).pipe(Effect.flatMap((response) => response.json))
      assert.deepStrictEqual((answer as { readonly usage: { readonly total_tokens: number } }).usage.total_tokens, 120)
      // remaining 0 for six minutes: the header held tokens, whatever the settle left
      assert.isFalse(yield* fits(provider, 1))
      yield* TestClock.adjust(Duration.seconds(360))
      assert.isTrue(yield* fits(provider, 1))
    }).pipe(run))
})
