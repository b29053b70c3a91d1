/**
 * Usage-based limits on the limiter's side: costs per dimension resolved to costs per limit, the
 * reservation that `reserve` returns (its settle and release), `tighten`'s mapping from what an
 * upstream said to the store's observations, and their metrics.
 *
 * @internal
 */
import type * as Pacer from "@sluice/core/Pacer"
import * as core from "@sluice/core/Usage"
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as RateLimiter from "../RateLimiter.js"
import { CostExceedsCapacity } from "../RateLimiterError.js"
import type * as RateLimiterStore from "../RateLimiterStore.js"
import type { Series } from "./metrics.js"
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
  /** The limiter's metric series, made once, and the registry they are recorded in. */
  readonly series: Series
  /** The longest `resetAfter` an observation holds a dimension for (`maxResetAfter`). */
  readonly maxResetAfterMillis: number
}

/**
 * A take's cost as one cost per limit, or why it cannot be charged (`@sluice/core/Usage`).
 *
 * @internal
 */
export const takeCosts = (
  shape: Shape,
  cost: RateLimiter.Cost
): Result.Result<ReadonlyArray<number>, string | CostExceedsCapacity> => {
  const result = core.takeCosts(shape, cost, show)
  switch (result._tag) {
    case "Resolved":
      return Result.succeed(result.costs)
    case "Invalid":
      return Result.fail(result.message)
    case "ExceedsCapacity": {
      const limit = shape.limits[result.index]
      return Result.fail(
        new CostExceedsCapacity({
          limiter: shape.name,
          dimension: limit.dimension,
          cost: result.cost,
          capacity: result.capacity,
          limit
        })
      )
    }
  }
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
): Result.Result<ReadonlyArray<number>, string> => {
  const resolved = core.perLimit(shape, cost, label, fallback, show)
  return resolved._tag === "Resolved" ? Result.succeed(resolved.costs) : Result.fail(resolved.message)
}

// -----------------------------------------------------------------------------
// reservations
// -----------------------------------------------------------------------------

/**
 * Where the limiter's local pacer charged a start (`@sluice/core/Pacer`).
 *
 * @internal
 */
export type LocalCharge = Pacer.LocalCharge

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
  const series = shape.series
  const estimate = core.byDimension(shape, costs)
  for (const dimension of shape.dimensions) {
    series.reserved[dimension].updateUnsafe(estimate[dimension], series.context)
  }
  // Set in the same synchronous step that decides to settle or release: one of them, once.
  let done = false

  const record = (actual: ReadonlyArray<number>, released: boolean): void => {
    const usage = core.byDimension(shape, actual)
    for (const dimension of shape.dimensions) {
      series.actual[dimension].updateUnsafe(usage[dimension], series.context)
      const error = core.estimateError(estimate[dimension], usage[dimension], released)
      if (error !== undefined) series.estimateError[dimension].updateUnsafe(error, series.context)
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
      if (Result.isFailure(resolved)) return illegal(shape.name, resolved.failure)
      done = true
      record(resolved.success, false)
      onUsage(costs, resolved.success, false)
      return core.settlesAsReserved(costs, resolved.success) ? Effect.void : settleWith(resolved.success)
    }))

  const release: Effect.Effect<void, RateLimiterStore.RateLimiterStoreError> = Effect.uninterruptible(
    Effect.suspend(() => {
      if (done) return Effect.void
      done = true
      const { cost, zeros } = core.released(costs)
      record(zeros, true)
      onUsage(costs, zeros, true)
      return Effect.flatMap(
        store.refund({
          key: shape.key,
          limits: shape.specs,
          cost,
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

/** A `resetAfter` as the core reads it: decoded here, where Effect's durations are known. */
const readResetAfter = (input: unknown): core.ResetAfter => {
  const decoded = decodeResetAfter(input)
  return Result.isFailure(decoded)
    ? { _tag: "Invalid", message: decoded.failure }
    : { _tag: "Millis", millis: Duration.toMillis(decoded.success) }
}

/**
 * What the store is told for `observations`, and the warnings (`@sluice/core/Usage`).
 *
 * @internal
 */
export const observationsFor = (
  shape: Shape,
  observations: unknown
): { readonly observations: ReadonlyArray<RateLimiterStore.Observation>; readonly warnings: ReadonlyArray<string> } =>
  core.observationsFor(shape, observations, readResetAfter, show)

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
      (warning) => Effect.logWarning(core.warning(shape.name, warning, show)),
      { discard: true }
    )
    if (mapped.observations.length === 0) return warn
    return Effect.andThen(
      warn,
      store.tighten({ key: shape.key, limits: shape.specs, observations: mapped.observations })
    )
  })
