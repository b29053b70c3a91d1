/** The Effect 4 half of the root's `bench effect4`: the shared workloads on effect 4 and sluice 2.x. */
import { Bulkhead } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Scope, Semaphore } from "effect"
import { RateLimiter as EffectRateLimiter } from "effect/persistence"
import { type EffectModule, workloadMain } from "../../../bench/src/lib/lineWorkloads.js"

type F = Effect.Effect<unknown, unknown>

await workloadMain<F>({
  Effect: Effect as unknown as EffectModule<F>,
  yieldNow: Effect.yieldNow,
  bulkhead: (permits) => {
    const bulkhead = Bulkhead.makeUnsafe({ name: "bench", permits })
    return (task) => bulkhead.run(task)
  },
  semaphore: (permits) => Semaphore.makeUnsafe(permits).withPermits(1),
  provider: async (settings) => {
    const scope = Scope.makeUnsafe()
    const provider = await Effect.runPromise(
      Provider.make({ ...settings, name: "bench" } as Provider.Options).pipe(
        Scope.provide(scope),
        Effect.provide(RateLimiterStore.layerMemory)
      )
    )
    return (task) => provider.call(task)
  },
  limiters: {
    sluice: async (limit, burst) => {
      const limiter = await Effect.runPromise(
        RateLimiter.make({ name: "bench", limit, window: "1 second", burst }).pipe(
          Effect.provide(RateLimiterStore.layerMemory)
        )
      )
      return limiter.take()
    },
    // Effect 4's own, as its docs use it: sleep until the token bucket admits the call
    "effect-ratelimiter": async (limit) => {
      const limiter = await Effect.runPromise(
        EffectRateLimiter.make.pipe(Effect.provide(EffectRateLimiter.layerStoreMemory))
      )
      return EffectRateLimiter.sleep(limiter, { key: "bench", limit, window: "1 second", algorithm: "token-bucket" })
    }
  }
})
