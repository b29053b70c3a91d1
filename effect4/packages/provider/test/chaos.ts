/**
 * What a randomized soak draws from, shared by the soak test and `bench soak`: a seeded generator
 * (so that every run makes the same choices and a failure can be replayed) and a failure the
 * provider retries.
 */
import { Provider } from "@sluice/provider"

/** mulberry32: a small seeded generator of numbers in [0, 1). */
export const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** A call's own failure that the provider retries (it carries `Provider.RetryableTypeId`). */
export class Flaky {
  readonly _tag = "Flaky"
  readonly [Provider.RetryableTypeId] = true
}
