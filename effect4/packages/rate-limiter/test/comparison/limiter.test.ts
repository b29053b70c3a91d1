/**
 * Effect 4's own rate limiter (`effect/persistence/RateLimiter`, memory store) beside sluice's,
 * on one scenario (RFC 0003 §4): one start per second; a starts at 0, b is told to wait until
 * 1000 and sleeps; b is interrupted at 500 while it holds the latest reservation; c arrives at 500.
 * Effect's tokens stay spent, so c waits out b's interval too and starts at 2000; sluice gives
 * b's slot back, and c starts at 1000. Effect's consume has no refund or settle, so a reservation
 * settled to its usage per dimension exists on sluice's side only. If Effect's half ever fails,
 * re-weigh using it.
 */
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Clock, Duration, Effect, Fiber } from "effect"
import { RateLimiter as EffectRateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"

let counter = 0
const uniqueKey = (prefix: string) => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`

/** Lets forked fibers reach their sleep without moving the clock. */
const settle = Effect.repeat(Effect.yieldNow, { times: 10 })

describe("comparison: Effect 4's RateLimiter and sluice's", () => {
  it.effect("Effect: a sleeper interrupted while it waits keeps its token spent; the next waits an interval", () =>
    Effect.gen(function*() {
      const limiter = yield* EffectRateLimiter.make
      const options = { key: uniqueKey("effect"), limit: 1, window: "1 second", algorithm: "token-bucket" } as const
      const take = Effect.andThen(EffectRateLimiter.sleep(limiter, options), Clock.currentTimeMillis)
      assert.strictEqual(yield* take, 0)
      const b = yield* Effect.forkChild(take)
      yield* settle
      yield* TestClock.adjust(500)
      yield* Fiber.interrupt(b)
      const c = yield* Effect.forkChild(take)
      yield* settle
      yield* TestClock.adjust("3 seconds")
      assert.strictEqual(yield* Fiber.join(c), 2000)
    }).pipe(Effect.provide(EffectRateLimiter.layerStoreMemory)))

  it.effect("sluice: the interrupted sleeper's slot comes back; the next starts in it", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.make({ name: uniqueKey("sluice"), limit: 1, window: "1 second" })
      const take = Effect.andThen(limiter.take(), Clock.currentTimeMillis)
      assert.strictEqual(yield* take, 0)
      const b = yield* Effect.forkChild(take)
      yield* settle
      yield* TestClock.adjust(500)
      yield* Fiber.interrupt(b)
      const c = yield* Effect.forkChild(take)
      yield* settle
      yield* TestClock.adjust("3 seconds")
      assert.strictEqual(yield* Fiber.join(c), 1000)
    }).pipe(Effect.provide(RateLimiterStore.layerMemory)))

  it.effect("Effect: consume charges its tokens at admission and nothing corrects them (no settle)", () =>
    Effect.gen(function*() {
      const limiter = yield* EffectRateLimiter.make
      const options = {
        key: uniqueKey("effect-usage"),
        limit: 100,
        window: "1 second",
        algorithm: "token-bucket"
      } as const
      const first = yield* limiter.consume({ ...options, tokens: 80 })
      assert.strictEqual(first.remaining, 20)
      // the call used 20 of its 80: there is no operation to say so
      assert.isFalse("settle" in limiter || "refund" in limiter)
      const refused = yield* Effect.flip(limiter.consume({ ...options, tokens: 100 }))
      assert.strictEqual(refused.reason._tag, "RateLimitExceeded")
      const retryAfter = refused.reason._tag === "RateLimitExceeded" ? refused.reason.retryAfter : undefined
      assert.strictEqual(retryAfter === undefined ? undefined : Duration.toMillis(retryAfter), 800)
    }).pipe(Effect.provide(EffectRateLimiter.layerStoreMemory)))

  it.effect("sluice: a reservation settled to its usage is charged per dimension", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.make({
        name: uniqueKey("sluice-usage"),
        limits: [
          { dimension: "requests", limit: 10, window: "1 second", burst: 10 },
          { dimension: "tokens", limit: 100, window: "1 second", burst: 100 }
        ]
      })
      const reservation = yield* limiter.reserve({ cost: { requests: 1, tokens: 80 } })
      assert.deepStrictEqual(reservation.cost, { requests: 1, tokens: 80 })
      yield* reservation.settle({ tokens: 20 })
      // 80 tokens charged, 20 used: 60 came back, so 100 are there again 200 ms on, not 800
      const refused = yield* Effect.flip(limiter.take({ cost: { tokens: 100 }, maxWait: 0 }))
      assert(refused._tag === "RateLimitExceeded")
      assert.strictEqual(refused.limit?.dimension, "tokens")
      assert.strictEqual(Duration.toMillis(refused.retryAfter), 200)
      // the requests dimension kept its estimate: 9 more fit now, a tenth does not
      yield* limiter.take({ cost: { requests: 9 }, maxWait: 0 })
      const requests = yield* Effect.flip(limiter.take({ cost: { requests: 1 }, maxWait: 0 }))
      assert(requests._tag === "RateLimitExceeded")
      assert.strictEqual(requests.limit?.dimension, "requests")
    }).pipe(Effect.provide(RateLimiterStore.layerMemory)))
})
