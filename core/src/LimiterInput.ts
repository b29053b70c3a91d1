/**
 * What a rate limiter reads of its options and a store of its requests, on plain numbers: a
 * limit's defaults, a request's cost on each limit, and the observations a store can apply.
 *
 * @since 0.1.0
 */
import type { LimitSpec } from "./Algorithm.js"
import type { Observation } from "./MemoryStore.js"
import * as OptionMessages from "./OptionMessages.js"

/**
 * The dimension of a limit that names none.
 *
 * @since 0.1.0
 * @category defaults
 */
export const DEFAULT_DIMENSION = "default"

/**
 * The longest reset an upstream's word holds a dimension for, unless `maxResetAfter` says
 * otherwise: one hour, as the HTTP header profiles bound it (a daily quota is obeyed an hour at a
 * time: the upstream says so again). A reset of ten years would stop the dimension in every
 * process sharing the store.
 *
 * @since 0.1.0
 * @category defaults
 */
export const DEFAULT_MAX_RESET_AFTER_MILLIS = 3_600_000

/**
 * A limit's algorithm, dimension and burst with their defaults: GCRA, `"default"`, and a burst
 * of 1 for GCRA, while a window algorithm admits its whole limit at once.
 *
 * @since 0.1.0
 * @category defaults
 */
export const limitDefaults = (limit: {
  readonly dimension?: string | undefined
  readonly limit: number
  readonly algorithm?: LimitSpec["algorithm"] | undefined
  readonly burst?: number | undefined
}): { readonly dimension: string; readonly algorithm: LimitSpec["algorithm"]; readonly burst: number } => {
  const algorithm = limit.algorithm ?? "gcra"
  return {
    dimension: limit.dimension ?? DEFAULT_DIMENSION,
    algorithm,
    burst: algorithm === "gcra" ? limit.burst ?? 1 : limit.limit
  }
}

/**
 * The cost of a reserve or refund on each limit: `costs`, or `cost` on every limit.
 *
 * @since 0.1.0
 * @category requests
 */
export const costsOf = (
  request: {
    readonly limits: ReadonlyArray<LimitSpec>
    readonly cost: number
    readonly costs?: ReadonlyArray<number> | undefined
  }
): ReadonlyArray<number> => request.costs ?? request.limits.map(() => request.cost)

/**
 * The observations of a tighten request a store can apply, and a sentence naming the key and
 * those it cannot (undefined when none): one whose `limit` is not an index of `limits`, whose
 * `remaining` is not a number ≥ 0, or whose `resetAfterMillis` is not a finite number ≥ 0. A store
 * ignores those with that warning rather than read them as 0 or fail. `show` writes the values
 * (a binding passes its own, which writes its Effect's `Duration`).
 *
 * @since 0.1.0
 * @category requests
 */
export const usableObservations = (
  request: {
    readonly key: string
    readonly limits: ReadonlyArray<LimitSpec>
    readonly observations: ReadonlyArray<Observation>
  },
  show: (u: unknown) => string = (u) => OptionMessages.show(u)
): { readonly usable: ReadonlyArray<Observation>; readonly ignored: string | undefined } => {
  const usable: Array<Observation> = []
  const ignored: Array<unknown> = []
  const observations: ReadonlyArray<unknown> = Array.isArray(request.observations) ? request.observations : []
  if (!Array.isArray(request.observations)) ignored.push(request.observations)
  for (const o of observations) {
    const ok = typeof o === "object" && o !== null && "limit" in o && "remaining" in o && "resetAfterMillis" in o &&
      Number.isInteger(o.limit) && (o.limit as number) >= 0 && (o.limit as number) < request.limits.length &&
      typeof o.remaining === "number" && o.remaining >= 0 &&
      typeof o.resetAfterMillis === "number" && Number.isFinite(o.resetAfterMillis) && o.resetAfterMillis >= 0
    if (ok) usable.push(o as Observation)
    else ignored.push(o)
  }
  return {
    usable,
    ignored: ignored.length === 0 ?
      undefined :
      `tighten of ${show(request.key)} ignored ${
        ignored.map(show).join(", ")
      }: an observation needs limit (an index of the limits), remaining (a number ≥ 0) and resetAfterMillis (a finite number ≥ 0)`
  }
}
