/**
 * What a take asks its limiter store, and what a refusal means, on plain numbers: the request of a
 * take's costs, and which reason, limit and cost a refused start names. The bindings build their
 * `RateLimitExceeded` and count it from these.
 *
 * @since 0.1.0
 */
import type { LimitSpec } from "./Algorithm.js"
import type { Refused, ReserveRequest } from "./MemoryStore.js"

/**
 * The request of a take with neither cost nor maxWait: one unit on every limit. Made once per
 * limiter: stores never keep or change it.
 *
 * @since 0.1.0
 * @category requests
 */
export const unitRequest = (
  key: string,
  limits: ReadonlyArray<LimitSpec>,
  maxWaitMillis: number
): ReserveRequest & { readonly costs: ReadonlyArray<number> } => ({
  key,
  limits,
  cost: 1,
  costs: limits.map(() => 1),
  maxWaitMillis
})

/**
 * `request` charged `costs` (one per limit): its `cost` is the largest, so that a store reading
 * only `cost` charges too much on some limits, never too little.
 *
 * @since 0.1.0
 * @category requests
 */
export const charged = <R extends ReserveRequest>(request: R, costs: ReadonlyArray<number>): R => ({
  ...request,
  cost: Math.max(...costs),
  costs
})

/**
 * A refused start, read: the key's pause held it, or the limit at `index` did; `cost` is what it
 * asked of that limit (of the whole key when paused).
 *
 * @since 0.1.0
 * @category refusals
 */
export type Refusal =
  | {
    readonly _tag: "Paused"
    readonly cost: number
    readonly retryAfterMillis: number
    readonly maxWaitMillis: number
  }
  | {
    readonly _tag: "Quota"
    readonly index: number
    readonly cost: number
    readonly retryAfterMillis: number
    readonly maxWaitMillis: number
  }

/**
 * What the store's refusal of `request` says (a `binding` below 0 is the key's pause).
 *
 * @since 0.1.0
 * @category refusals
 */
export const refusalOf = (refused: Refused, request: ReserveRequest): Refusal => {
  const { maxWaitMillis } = request
  const { retryAfterMillis } = refused
  if (refused.binding < 0) return { _tag: "Paused", cost: request.cost, retryAfterMillis, maxWaitMillis }
  const cost = request.costs?.[refused.binding] ?? request.cost
  return { _tag: "Quota", index: refused.binding, cost, retryAfterMillis, maxWaitMillis }
}
