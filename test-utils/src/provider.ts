import type { Provider } from "@sluice/provider"
import type { RateLimiter } from "@sluice/rate-limiter"
import { Effect } from "effect"

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
