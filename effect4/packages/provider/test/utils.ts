/** Helpers shared by the provider's tests. */
import type { Bulkhead } from "@sluice/bulkhead"
import type { Provider } from "@sluice/provider"
import type { RateLimiter } from "@sluice/rate-limiter"
import { Effect, Metric, Result } from "effect"

let counter = 0
/** A name no other test uses: metrics live in one registry for the whole process. */
export const uniqueName = (prefix: string): string => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`

/** The state of a metric for one provider, by its `name` attribute (and optional extra ones). */
export const metricOf = <Input, State>(
  metric: Metric.Metric<Input, State>,
  name: string,
  extra: Record<string, string> = {}
): Effect.Effect<State> => Metric.value(Metric.withAttributes(metric, { name, ...extra }))

/**
 * Lets every runnable fiber take `turns` scheduler turns: enough for forked fibers to reach the
 * point where they wait, without moving the TestClock.
 */
export const yieldTurns = (turns = 20): Effect.Effect<void> => Effect.repeat(Effect.yieldNow, { times: turns })

/** Asserts that a bulkhead is back to rest: nothing held and nobody queued. */
export const expectIdle = (bulkhead: Bulkhead.Bulkhead<unknown>): Effect.Effect<void> =>
  Effect.flatMap(bulkhead.stats, (stats) =>
    stats.inFlight === 0 && stats.holders === 0 && stats.waiting === 0
      ? Effect.void
      : Effect.die(new Error(`bulkhead not idle: ${JSON.stringify(stats)}`)))

/** The current TestClock time in milliseconds. */
export const now: Effect.Effect<number> = Effect.clockWith((clock) => clock.currentTimeMillis)

/**
 * Tokens a provider's limiter lets start now, found by halving up to `most`: the largest `n` that
 * reserves without waiting. A probe that fits is reserved, then released.
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
