/**
 * Two dimensions of one quota (requests and tokens), Effect 4's `RateLimiter` beside sluice's
 * (RFC 0003 §4, "several dimensions"). Effect's `consume` checks one limit per call, so a caller
 * takes its request and then its tokens; when the tokens are refused, the request is already
 * spent. sluice takes every dimension of a call in one decision: a refusal on tokens charges no
 * request. If Effect's half ever fails, re-weigh using it.
 */
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Effect } from "effect"
import { RateLimiter as EffectRateLimiter } from "effect/persistence"

let counter = 0
const uniqueKey = (prefix: string) => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`

describe("comparison: several dimensions, Effect 4's RateLimiter and sluice's", () => {
  it.effect("Effect: a call refused on tokens has spent its request", () =>
    Effect.gen(function*() {
      const limiter = yield* EffectRateLimiter.make
      const requests = { key: uniqueKey("requests"), limit: 10, window: "1 second", algorithm: "token-bucket" } as const
      const tokens = { key: uniqueKey("tokens"), limit: 100, window: "1 second", algorithm: "token-bucket" } as const
      const call = Effect.andThen(limiter.consume(requests), limiter.consume({ ...tokens, tokens: 80 }))
      yield* call
      const refused = yield* Effect.flip(call)
      assert.strictEqual(refused.reason._tag, "RateLimitExceeded")
      // two calls, one admitted: yet two requests are gone, and the next consume sees 7 left
      const next = yield* limiter.consume(requests)
      assert.strictEqual(next.remaining, 7)
    }).pipe(Effect.provide(EffectRateLimiter.layerStoreMemory)))

  it.effect("sluice: a call refused on tokens charges no request", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.make({
        name: uniqueKey("sluice-dimensions"),
        limits: [
          { dimension: "requests", limit: 10, window: "1 second", burst: 10 },
          { dimension: "tokens", limit: 100, window: "1 second", burst: 100 }
        ]
      })
      const call = limiter.take({ cost: { requests: 1, tokens: 80 }, maxWait: 0 })
      yield* call
      const refused = yield* Effect.flip(call)
      assert(refused._tag === "RateLimitExceeded")
      assert.strictEqual(refused.limit?.dimension, "tokens")
      // one call admitted, one request charged: 9 more fit, a tenth does not
      yield* limiter.take({ cost: { requests: 9 }, maxWait: 0 })
      const tenth = yield* Effect.flip(limiter.take({ cost: { requests: 1 }, maxWait: 0 }))
      assert(tenth._tag === "RateLimitExceeded")
      assert.strictEqual(tenth.limit?.dimension, "requests")
    }).pipe(Effect.provide(RateLimiterStore.layerMemory)))
})
