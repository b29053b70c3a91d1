/** The Effect 4 half of the root's `bench effect4`: the shared workloads on effect 4 and sluice 2.x. */
import { Bulkhead } from "@sluice/bulkhead"
import { Effect, Semaphore } from "effect"
import { type EffectModule, workloadMain } from "../../../bench/src/lib/lineWorkloads.js"

type F = Effect.Effect<unknown, unknown>

await workloadMain<F>({
  Effect: Effect as unknown as EffectModule<F>,
  yieldNow: Effect.yieldNow,
  bulkhead: (permits) => {
    const bulkhead = Bulkhead.makeUnsafe({ name: "bench", permits })
    return (task) => bulkhead.run(task)
  },
  semaphore: (permits) => Semaphore.makeUnsafe(permits).withPermits(1)
})
