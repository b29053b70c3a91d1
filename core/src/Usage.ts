/**
 * Usage-based limits on the limiter's side, on plain numbers: a take's costs per dimension resolved
 * to one cost per limit, the figures a reservation records when it settles or is released, and
 * which limit each observation of an upstream tightens. The bindings keep the metrics, the store
 * calls and the logging; messages are built here so that both lines print the same sentences.
 *
 * @since 0.1.0
 */
import { capacity, type LimitSpec } from "./Algorithm.js"
import * as OptionMessages from "./OptionMessages.js"

/**
 * The limits as the usage rules read them: `limits[i]` and `specs[i]` describe the same limit.
 *
 * @since 0.1.0
 * @category models
 */
export interface Shape {
  /** The limiter's name, as its messages name it. */
  readonly name: string
  readonly limits: ReadonlyArray<{ readonly dimension: string; readonly limit: number }>
  readonly specs: ReadonlyArray<LimitSpec>
  /** Every dimension, once, in the order of the limits. */
  readonly dimensions: ReadonlyArray<string>
  /** The longest `resetAfter` an observation holds a dimension for. */
  readonly maxResetAfterMillis: number
}

/**
 * Shows a value in a message. A binding passes its own (which writes its Effect's `Duration`).
 *
 * @since 0.1.0
 * @category models
 */
export type Show = (u: unknown) => string

const plainShow: Show = (u) => OptionMessages.show(u)

const isUnits = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 0

/**
 * A cost resolved to one figure per limit, or the sentence refusing it.
 *
 * @since 0.1.0
 * @category models
 */
export type Resolved =
  | { readonly _tag: "Resolved"; readonly costs: ReadonlyArray<number> }
  | { readonly _tag: "Invalid"; readonly message: string }

/**
 * A take's cost per limit, or why it cannot be charged: `ExceedsCapacity` names the first limit
 * whose capacity (`burst` for GCRA, `limit` for windows) the cost is above, since no wait would do.
 *
 * @since 0.1.0
 * @category models
 */
export type TakeCosts =
  | Resolved
  | {
    readonly _tag: "ExceedsCapacity"
    /** The index of the limit. */
    readonly index: number
    readonly cost: number
    readonly capacity: number
  }

/**
 * A take's cost as one cost per limit. A number must be an integer ≥ 1; a record holds integers
 * ≥ 0 under known dimensions.
 *
 * @since 0.1.0
 * @category costs
 */
export const takeCosts = (shape: Shape, cost: unknown, show: Show = plainShow): TakeCosts => {
  if (typeof cost === "number" && !(isUnits(cost) && cost >= 1)) {
    return { _tag: "Invalid", message: `cost must be an integer ≥ 1, got ${show(cost)}` }
  }
  const resolved = perLimit(shape, cost, "cost", undefined, show)
  if (resolved._tag === "Invalid") return resolved
  for (let i = 0; i < shape.specs.length; i++) {
    const limitCapacity = capacity(shape.specs[i])
    if (resolved.costs[i] > limitCapacity) {
      return { _tag: "ExceedsCapacity", index: i, cost: resolved.costs[i], capacity: limitCapacity }
    }
  }
  return resolved
}

/**
 * A cost (or a usage) as one figure per limit; a dimension a record omits is `fallback[i]`, or 0.
 * `label` names the figure in the message (`cost`, `actual usage`).
 *
 * @since 0.1.0
 * @category costs
 */
export const perLimit = (
  shape: Shape,
  cost: unknown,
  label: string,
  fallback: ReadonlyArray<number> | undefined,
  show: Show = plainShow
): Resolved => {
  if (typeof cost === "number") {
    return isUnits(cost)
      ? { _tag: "Resolved", costs: shape.specs.map(() => cost) }
      : { _tag: "Invalid", message: `${label} must be an integer ≥ 0, got ${show(cost)}` }
  }
  if (typeof cost !== "object" || cost === null) {
    return { _tag: "Invalid", message: `${label} must be a number or a record, got ${show(cost)}` }
  }
  for (const [dimension, units] of Object.entries(cost)) {
    if (!shape.dimensions.includes(dimension)) {
      return {
        _tag: "Invalid",
        message: `${label} names the dimension ${show(dimension)}, which no limit has (dimensions: ${
          shape.dimensions.map(show).join(", ")
        })`
      }
    }
    if (!isUnits(units)) {
      return {
        _tag: "Invalid",
        message: `${label} on dimension ${show(dimension)} must be an integer ≥ 0, got ${show(units)}`
      }
    }
  }
  const record = cost as { readonly [dimension: string]: number | undefined }
  return {
    _tag: "Resolved",
    costs: shape.limits.map((limit, i) => {
      const units = Object.hasOwn(record, limit.dimension) ? record[limit.dimension] : undefined
      return units ?? fallback?.[i] ?? 0
    })
  }
}

// -----------------------------------------------------------------------------
// reservations
// -----------------------------------------------------------------------------

/**
 * Per dimension, the figure of its first limit (every limit of a dimension has the same).
 *
 * @since 0.1.0
 * @category reservations
 */
export const byDimension = (shape: Shape, perLimitUnits: ReadonlyArray<number>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (let i = 0; i < shape.limits.length; i++) {
    const dimension = shape.limits[i].dimension
    if (!Object.hasOwn(out, dimension)) out[dimension] = perLimitUnits[i]
  }
  return out
}

/**
 * How far the estimate was off, as a ratio of the estimate (`+0.5`: half as much again was used);
 * undefined when nothing was estimated, or the reservation was released (nothing was used).
 *
 * @since 0.1.0
 * @category reservations
 */
export const estimateError = (estimate: number, actual: number, released: boolean): number | undefined =>
  released || estimate <= 0 ? undefined : (actual - estimate) / estimate

/**
 * Whether a settle changes nothing, so the store need not hear of it: the usage is the estimate.
 *
 * @since 0.1.0
 * @category reservations
 */
export const settlesAsReserved = (reserved: ReadonlyArray<number>, actual: ReadonlyArray<number>): boolean =>
  actual.every((units, i) => units === reserved[i])

/**
 * What a released reservation hands back: the refund's single cost (the largest, for stores that
 * read one) and the zero usage it settles to when the refund cannot take it back.
 *
 * @since 0.1.0
 * @category reservations
 */
export const released = (
  costs: ReadonlyArray<number>
): { readonly cost: number; readonly zeros: ReadonlyArray<number> } => ({
  cost: Math.max(...costs),
  zeros: costs.map(() => 0)
})

// -----------------------------------------------------------------------------
// tighten
// -----------------------------------------------------------------------------

/**
 * A store's observation: the limit's index, what remains, and when it resets (0: not said).
 *
 * @since 0.1.0
 * @category tighten
 */
export interface Observation {
  readonly limit: number
  readonly remaining: number
  readonly resetAfterMillis: number
}

/**
 * A `resetAfter` read by the binding (which knows its Effect's durations): its milliseconds, or
 * the sentence refusing it.
 *
 * @since 0.1.0
 * @category tighten
 */
export type ResetAfter =
  | { readonly _tag: "Millis"; readonly millis: number }
  | { readonly _tag: "Invalid"; readonly message: string }

/** The limit of `dimension` an observation describes: the nearest configured limit, then the shortest window. */
const limitFor = (shape: Shape, dimension: string, limit: number | undefined): number => {
  let best = -1
  for (let i = 0; i < shape.limits.length; i++) {
    if (shape.limits[i].dimension !== dimension) continue
    if (best < 0) {
      best = i
      continue
    }
    const distance = (j: number) => limit === undefined ? 0 : Math.abs(shape.limits[j].limit - limit)
    const d = distance(i) - distance(best)
    if (d < 0 || (d === 0 && shape.specs[i].windowMillis < shape.specs[best].windowMillis)) best = i
  }
  return best
}

/**
 * What the store is told for `observations`, one per limit (the lowest `remaining`, the longest
 * reset), and the warnings for what was ignored or bounded. `observations` is read as untyped
 * input: headers are data, and a caller's mistake must name the limiter, not throw a `TypeError`.
 *
 * @since 0.1.0
 * @category tighten
 */
export const observationsFor = (
  shape: Shape,
  observations: unknown,
  readResetAfter: (input: unknown) => ResetAfter,
  show: Show = plainShow
): { readonly observations: ReadonlyArray<Observation>; readonly warnings: ReadonlyArray<string> } => {
  const byLimit = new Map<number, { remaining: number; resetAfterMillis: number }>()
  const warnings: Array<string> = []
  if (!Array.isArray(observations)) {
    return {
      observations: [],
      warnings: [`tighten takes an array of observations, got ${show(observations)}: ignored`]
    }
  }
  for (const observation of observations as ReadonlyArray<unknown>) {
    if (typeof observation !== "object" || observation === null) {
      warnings.push(`an observation must be a record, got ${show(observation)}: ignored`)
      continue
    }
    const { dimension, limit, remaining, resetAfter } = observation as {
      readonly dimension?: unknown
      readonly limit?: number | undefined
      readonly remaining?: unknown
      readonly resetAfter?: unknown
    }
    if (remaining === undefined) continue
    const index = typeof dimension === "string" ? limitFor(shape, dimension, limit) : -1
    if (index < 0) {
      warnings.push(`an observation of the unknown dimension ${show(dimension)} was ignored`)
      continue
    }
    if (!isUnits(remaining)) {
      warnings.push(`remaining ${show(remaining)} on dimension ${show(dimension)} was ignored`)
      continue
    }
    let resetAfterMillis = 0
    if (resetAfter !== undefined) {
      const decoded = readResetAfter(resetAfter)
      if (decoded._tag === "Invalid") {
        warnings.push(`${decoded.message} on dimension ${show(dimension)}: the reset was ignored`)
      } else {
        resetAfterMillis = decoded.millis
        if (resetAfterMillis > shape.maxResetAfterMillis) {
          // only a reset with nothing remaining holds the dimension: one with units left is bounded quietly
          if (remaining === 0) {
            warnings.push(
              `resetAfter ${show(resetAfter)} on dimension ${
                show(dimension)
              } is beyond maxResetAfter (${shape.maxResetAfterMillis} ms): read as ${shape.maxResetAfterMillis} ms`
            )
          }
          resetAfterMillis = shape.maxResetAfterMillis
        }
      }
    }
    const seen = byLimit.get(index)
    byLimit.set(index, {
      remaining: Math.min(remaining, seen?.remaining ?? Number.POSITIVE_INFINITY),
      resetAfterMillis: Math.max(resetAfterMillis, seen?.resetAfterMillis ?? 0)
    })
  }
  return {
    observations: Array.from(byLimit, ([limit, seen]) => ({ limit, ...seen })),
    warnings
  }
}

/**
 * A warning of `observationsFor` as the limiter logs it, naming the limiter.
 *
 * @since 0.1.0
 * @category tighten
 */
export const warning = (name: string, text: string, show: Show = plainShow): string =>
  `rate limiter ${show(name)}: ${text}`
