/**
 * An upstream's reset in Redis: bounded by the limiter's `maxResetAfter` before it reaches the
 * store, and the store's scripts never fail on the numbers they are given (a reset of 10^18 ms
 * failed the script with "value is not an integer or out of range", and marked the store degraded).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { RateLimiter } from "@sluice/rate-limiter"
import type * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import { Duration, Effect } from "effect"
import { inject } from "vitest"
import { call, degradedValue, inspector, store, uniquePrefix } from "./utils.js"

const url = inject("redisUrl")

const limits: ReadonlyArray<RateLimiterStore.LimitSpec> = [
  { algorithm: "gcra", limit: 10, windowMillis: 1000, burst: 10 },
  { algorithm: "sliding-window", limit: 100, windowMillis: 60_000, burst: 100 }
]

describe("resets in Redis", () => {
  it.live("a limiter's tighten holds the dimension, and keeps the key, for maxResetAfter at most", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("reset")
      const s = yield* store({ url, prefix })
      const redis = yield* inspector(url)
      const limiter = yield* RateLimiter.make({
        name: "far",
        limits: [{ dimension: "tokens", limit: 1000, window: "1 minute", burst: 1000 }],
        store: s
      })
      // IETF's t=999999999999999, in milliseconds
      yield* limiter.tighten([{ dimension: "tokens", remaining: 0, resetAfter: 999_999_999_999_999_000 }])
      const held = yield* Effect.flip(limiter.take({ cost: { tokens: 1 }, maxWait: 0 }))
      assert(held._tag === "RateLimitExceeded")
      const wait = Duration.toMillis(held.retryAfter)
      expect(wait).toBeGreaterThan(3_590_000)
      expect(wait).toBeLessThanOrEqual(3_600_000)
      const ttl = yield* call(() => redis.pttl(`${prefix}{far}:v2`))
      expect(ttl).toBeGreaterThan(3_590_000)
      expect(ttl).toBeLessThanOrEqual(3_600_000)
      assert.strictEqual(yield* degradedValue(prefix), 0)
    }).pipe(Effect.scoped))

  it.live("the store's scripts take any number a caller gives: a huge reset, NaN, a negative one", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("reset-raw")
      const s = yield* store({ url, prefix })
      const redis = yield* inspector(url)
      for (const resetAfterMillis of [1e18, 1e300, Number.NaN, -5, Number.POSITIVE_INFINITY]) {
        yield* s.tighten({
          key: "raw",
          limits,
          observations: [
            { limit: 0, remaining: 0, resetAfterMillis },
            { limit: 1, remaining: 0, resetAfterMillis }
          ]
        })
      }
      yield* s.tighten({
        key: "raw",
        limits,
        observations: [{ limit: 0, remaining: Number.NaN, resetAfterMillis: 0 }, {
          limit: 7,
          remaining: 0,
          resetAfterMillis: 0
        }]
      })
      assert.strictEqual(yield* degradedValue(prefix), 0)
      // the huge resets held the limits (a TTL Redis can set: below 10^14 ms, some 3,000 years)
      const refused = yield* s.reserve({ key: "raw", limits, cost: 1, maxWaitMillis: 0 })
      assert(refused._tag === "Refused")
      expect(refused.delayMillis).toBeGreaterThan(1e17)
      const ttl = yield* call(() => redis.pttl(`${prefix}{raw}:v2`))
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThan(1e14)
    }).pipe(Effect.scoped))
})
