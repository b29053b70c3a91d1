import type { Bulkhead } from "@sluice/bulkhead"
import type { Provider } from "@sluice/provider"
import type { RateLimiter } from "@sluice/rate-limiter"
import { Effect } from "effect"

export { metricOf, settle, uniqueName } from "../../bulkhead/test/utils.js"

/** Asserts that a bulkhead is back to rest: nothing held and nobody queued. */
export const expectIdle = (bulkhead: Bulkhead.Bulkhead): Effect.Effect<void> =>
  Effect.flatMap(bulkhead.stats, (stats) =>
    stats.inFlight === 0 && stats.holders === 0 && stats.waiting === 0
      ? Effect.void
      : Effect.dieMessage(`bulkhead not idle: ${JSON.stringify(stats)}`))

/** The current TestClock time in milliseconds. */
export const now: Effect.Effect<number> = Effect.clockWith((clock) => clock.currentTimeMillis)

/**
 * Tokens a provider's limiter lets start now, found by halving up to `most`: the largest `n` that
 * reserves without waiting. A probe that fits is reserved, then released: the newest reservation
 * comes back whole.
 */
export const room = (provider: Provider.Provider<unknown>, most = 1000): Effect.Effect<number> =>
  Effect.gen(function*() {
    const limiter = provider.rateLimiter as RateLimiter.RateLimiter
    let lo = 0
    let hi = most
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2)
      const probe = yield* Effect.either(limiter.reserve({ cost: { tokens: mid }, maxWait: 0 }))
      if (probe._tag === "Right") {
        yield* Effect.orDie(probe.right.release)
        lo = mid
      } else {
        hi = mid - 1
      }
    }
    return lo
  })
