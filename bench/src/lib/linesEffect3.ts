/** The Effect 3 half of `bench effect4`: the shared workloads on effect 3 and sluice 0.x. */
import { Bulkhead } from "@sluice/bulkhead"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Effect } from "effect"
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
