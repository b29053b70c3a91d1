/** The Effect 3 half of `bench effect4`: the shared workloads on effect 3 and sluice 0.x. */
import { Bulkhead } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Scope } from "effect"
import { type EffectModule, workloadMain } from "./lineWorkloads.js"

type F = Effect.Effect<unknown, unknown>

await workloadMain<F>({
  Effect: Effect as unknown as EffectModule<F>,
  yieldNow: Effect.yieldNow(),
  bulkhead: (permits) => {
    const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits })
    return (task) => bulkhead.run(task)
  },
  semaphore: (permits) => Effect.unsafeMakeSemaphore(permits).withPermits(1),
  provider: async (settings) => {
    const scope = Effect.runSync(Scope.make())
    const provider = await Effect.runPromise(
      Provider.make({ ...settings, name: "bench" } as Provider.Options).pipe(
        Scope.extend(scope),
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
    }
  }
})
