/** Providers the tests share. */
import { Provider } from "@sluice/provider"
import type { RateLimiter } from "@sluice/rate-limiter"
import { Effect, Result } from "effect"

/**
 * A provider limited to 100 requests and 1,000 tokens a minute, the tokens in a fixed window so
 * that what the limiter holds is read exactly.
 */
export const tokensPerMinute = (name: string, permits: number) =>
  Provider.make({
    name,
    bulkhead: { permits },
    rateLimiter: {
      limits: [
        { dimension: "requests", limit: 100, window: "1 minute" },
        { dimension: "tokens", limit: 1000, window: "1 minute", algorithm: "fixed-window" }
      ]
    }
  })

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
      const probe = yield* Effect.result(limiter.reserve({ cost: { tokens: mid }, maxWait: 0 }))
      if (Result.isSuccess(probe)) {
        yield* Effect.orDie(probe.success.release)
        lo = mid
      } else {
        hi = mid - 1
      }
    }
    return lo
  })
