/**
 * Usage-based limits on the limiter's side: costs per dimension resolved to costs per limit, the
 * reservation that `reserve` returns (its settle and release), `tighten`'s mapping from what an
 * upstream said to the store's observations, and their metrics.
 *
 * @internal
 */
import * as algorithm from "@sluice/core/Algorithm"
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as MetricLabel from "effect/MetricLabel"
import type * as RateLimiter from "../RateLimiter.js"
import { CostExceedsCapacity } from "../RateLimiterError.js"
import type * as RateLimiterStore from "../RateLimiterStore.js"
import { actualUnitsTotal, estimateErrorRatio, reservedUnitsTotal } from "./metrics.js"
import { decodeResetAfter, illegal, show } from "./settings.js"

// -----------------------------------------------------------------------------
// costs
// -----------------------------------------------------------------------------

/** The limits as the usage code reads them. */
export interface Shape {
  readonly name: string
  readonly key: string
  readonly limits: NonEmptyReadonlyArray<RateLimiter.ResolvedLimit>
  readonly specs: ReadonlyArray<RateLimiterStore.LimitSpec>
  readonly dimensions: NonEmptyReadonlyArray<string>
  /**
   * The metric labels of each dimension, made once: a metric finds its series by the labels
   * array it is given, so a fresh array per update would key (and hash) the series anew each time.
   */
  readonly labels: Readonly<Record<string, ReadonlyArray<MetricLabel.MetricLabel>>>
  /** The longest `resetAfter` an observation holds a dimension for (`maxResetAfter`). */
  readonly maxResetAfterMillis: number
}

/** @internal */
export const labelsByDimension = (
  name: string,
  dimensions: ReadonlyArray<string>
): Record<string, ReadonlyArray<MetricLabel.MetricLabel>> =>
  Object.fromEntries(
    dimensions.map((dimension) => [dimension, [
      MetricLabel.make("name", name),
      MetricLabel.make("dimension", dimension)
    ]])
  )

const isUnits = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 0

/**
 * A take's cost as one cost per limit, or why it cannot be charged. A number must be an integer
 * ≥ 1; a record holds integers ≥ 0 under known dimensions.
 *
 * @internal
 */
export const takeCosts = (
  shape: Shape,
  cost: RateLimiter.Cost
): Either.Either<ReadonlyArray<number>, string | CostExceedsCapacity> => {
  if (typeof cost === "number" && !(isUnits(cost) && cost >= 1)) {
    return Either.left(`cost must be an integer ≥ 1, got ${show(cost)}`)
  }
  const costs = perLimit(shape, cost, "cost", undefined)
  if (Either.isLeft(costs)) return costs
  for (let i = 0; i < shape.specs.length; i++) {
    const capacity = algorithm.capacity(shape.specs[i])
    const limit = shape.limits[i]
    if (costs.right[i] > capacity) {
      return Either.left(
        new CostExceedsCapacity({
          limiter: shape.name,
          dimension: limit.dimension,
          cost: costs.right[i],
          capacity,
          limit
        })
      )
    }
  }
  return costs
}

/**
 * A cost (or a usage) as one figure per limit; a dimension a record omits is `fallback[i]`, or 0.
 *
 * @internal
 */
export const perLimit = (
  shape: Shape,
  cost: RateLimiter.Cost,
  label: string,
  fallback: ReadonlyArray<number> | undefined
): Either.Either<ReadonlyArray<number>, string> => {
  if (typeof cost === "number") {
    return isUnits(cost)
      ? Either.right(shape.specs.map(() => cost))
      : Either.left(`${label} must be an integer ≥ 0, got ${show(cost)}`)
  }
  if (typeof cost !== "object" || cost === null) {
    return Either.left(`${label} must be a number or a record, got ${show(cost)}`)
  }
  for (const [dimension, units] of Object.entries(cost)) {
    if (!shape.dimensions.includes(dimension)) {
      return Either.left(
        `${label} names the dimension ${show(dimension)}, which no limit has (dimensions: ${
          shape.dimensions.map(show).join(", ")
        })`
      )
    }
    if (!isUnits(units)) {
      return Either.left(`${label} on dimension ${show(dimension)} must be an integer ≥ 0, got ${show(units)}`)
    }
  }
  return Either.right(shape.limits.map((limit, i) => {
    const units = Object.hasOwn(cost, limit.dimension) ? cost[limit.dimension] : undefined
    return units ?? fallback?.[i] ?? 0
  }))
}

/** Per dimension, the figure of its first limit (every limit of a dimension has the same). */
const byDimension = (shape: Shape, perLimitUnits: ReadonlyArray<number>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (let i = 0; i < shape.limits.length; i++) {
    const dimension = shape.limits[i].dimension
    if (!Object.hasOwn(out, dimension)) out[dimension] = perLimitUnits[i]
  }
  return out
}

// -----------------------------------------------------------------------------
// reservations
// -----------------------------------------------------------------------------

/**
 * Where the limiter's local pacer charged a start: when, and each limit's `restorePoint` before.
 *
 * @internal
 */
export interface LocalCharge {
  readonly at: number
  readonly points: ReadonlyArray<number>
  /** The pacer's number for this charge: a release rolls it back exactly while it is the latest. */
  readonly seq: number
}

/**
 * The reservation of a start, once the store reserved it and the caller started. `onUsage`
 * applies the usage to the limiter's own pacer, synchronously, before the store hears of it.
 *
 * @internal
 */
export const makeReservation = (
  shape: Shape,
  store: RateLimiterStore.Service,
  costs: ReadonlyArray<number>,
  reserved: RateLimiterStore.Reserved,
  onUsage: (reserved: ReadonlyArray<number>, actual: ReadonlyArray<number>, released: boolean) => void
): RateLimiter.Reservation => {
  const estimate = byDimension(shape, costs)
  for (const dimension of shape.dimensions) {
    reservedUnitsTotal.unsafeUpdate(estimate[dimension], shape.labels[dimension])
  }
  // Set in the same synchronous step that decides to settle or release: one of them, once.
  let done = false

  const record = (actual: ReadonlyArray<number>, released: boolean): void => {
    const usage = byDimension(shape, actual)
    for (const dimension of shape.dimensions) {
      const labels = shape.labels[dimension]
      actualUnitsTotal.unsafeUpdate(usage[dimension], labels)
      if (!released && estimate[dimension] > 0) {
        estimateErrorRatio.unsafeUpdate((usage[dimension] - estimate[dimension]) / estimate[dimension], labels)
      }
    }
  }

  const settleWith = (actual: ReadonlyArray<number>) =>
    store.settle({
      key: shape.key,
      limits: shape.specs,
      reservation: reserved.reservation,
      restore: reserved.restore,
      reserved: costs,
      actual
    })

  const settle = (actual: RateLimiter.Cost): Effect.Effect<void, RateLimiterStore.RateLimiterStoreError> =>
    Effect.uninterruptible(Effect.suspend(() => {
      if (done) return Effect.void
      const resolved = perLimit(shape, actual, "actual usage", costs)
      if (Either.isLeft(resolved)) return illegal(shape.name, resolved.left)
      done = true
      record(resolved.right, false)
      onUsage(costs, resolved.right, false)
      return resolved.right.every((units, i) => units === costs[i]) ? Effect.void : settleWith(resolved.right)
    }))

  const release: Effect.Effect<void, RateLimiterStore.RateLimiterStoreError> = Effect.uninterruptible(
    Effect.suspend(() => {
      if (done) return Effect.void
      done = true
      const zeros = costs.map(() => 0)
      record(zeros, true)
      onUsage(costs, zeros, true)
      return Effect.flatMap(
        store.refund({
          key: shape.key,
          limits: shape.specs,
          cost: Math.max(...costs),
          costs,
          reservation: reserved.reservation,
          restore: reserved.restore
        }),
        (refunded) => refunded ? Effect.void : settleWith(zeros)
      )
    })
  )

  return { name: shape.name, cost: estimate, settle, release }
}

// -----------------------------------------------------------------------------
// tighten
// -----------------------------------------------------------------------------

/** The limit of `dimension` an observation describes: the nearest configured limit, then the shortest window. */
const limitFor = (shape: Shape, dimension: string, limit: number | undefined): number => {
  let best = -1
  for (let i = 0; i < shape.limits.length; i++) {
    const candidate = shape.limits[i]
    if (candidate.dimension !== dimension) continue
    if (best < 0) {
      best = i
      continue
    }
    const current = shape.limits[best]
    const distance = (l: RateLimiter.ResolvedLimit) => limit === undefined ? 0 : Math.abs(l.limit - limit)
    const d = distance(candidate) - distance(current)
    if (d < 0 || (d === 0 && Duration.lessThan(candidate.window, current.window))) best = i
  }
  return best
}

/**
 * What the store is told for `observations`, one per limit (the lowest `remaining`, the longest
 * reset), and the warnings for what was ignored or bounded. `observations` is read as untyped
 * input: headers are data, and a caller's mistake must name the limiter, not throw a `TypeError`.
 *
 * @internal
 */
export const observationsFor = (
  shape: Shape,
  observations: unknown
): { readonly observations: ReadonlyArray<RateLimiterStore.Observation>; readonly warnings: ReadonlyArray<string> } => {
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
    const { dimension, limit, remaining, resetAfter } = observation as Partial<RateLimiter.Observation>
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
      const decoded = decodeResetAfter(resetAfter)
      if (Either.isLeft(decoded)) {
        warnings.push(`${decoded.left} on dimension ${show(dimension)}: the reset was ignored`)
      } else {
        resetAfterMillis = Duration.toMillis(decoded.right)
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

/** @internal */
export const tighten = (
  shape: Shape,
  store: RateLimiterStore.Service,
  observations: ReadonlyArray<RateLimiter.Observation>
): Effect.Effect<void, RateLimiterStore.RateLimiterStoreError> =>
  Effect.suspend(() => {
    const mapped = observationsFor(shape, observations)
    const warn = Effect.forEach(
      mapped.warnings,
      (warning) => Effect.logWarning(`rate limiter ${show(shape.name)}: ${warning}`),
      { discard: true }
    )
    if (mapped.observations.length === 0) return warn
    return Effect.zipRight(
      warn,
      store.tighten({ key: shape.key, limits: shape.specs, observations: mapped.observations })
    )
  })
