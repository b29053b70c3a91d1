/**
 * A rate limiter's metrics, shared by every limiter (with the attribute `name`, and `dimension`
 * where usage is measured).
 *
 * @internal
 */
import type * as Context from "effect/Context"
import * as Metric from "effect/Metric"

/**
 * From 0.5 ms doubling to ~131 s: a paced start waits milliseconds; longer waits (behind a daily
 * quota) land in the last bucket.
 *
 * @internal
 */
export const waitSeconds = Metric.histogram("sluice_limiter_wait_seconds", {
  boundaries: Metric.exponentialBoundaries({ start: 0.0005, factor: 2, count: 20 }),
  description: "Time from the store's decision to the start, in seconds, per rate limiter"
})

/** @internal */
export const rejectedTotal = Metric.counter("sluice_limiter_rejected_total", {
  description: "Takes refused because the start would come later than maxWait, by limiter and reason",
  incremental: true
})

/**
 * From 0.1 ms doubling to ~1.6 s: how late the limiter's timers fired after their instants.
 *
 * @internal
 */
export const timerLatenessSeconds = Metric.histogram("sluice_limiter_timer_lateness_seconds", {
  boundaries: Metric.exponentialBoundaries({ start: 0.0001, factor: 2, count: 16 }),
  description: "How late each timer of a rate limiter fired after the instant it was set for, in seconds"
})

/** @internal */
export const reservedUnitsTotal = Metric.counter("sluice_limiter_reserved_units_total", {
  description: "Units reserved by reserve (the estimates), by limiter and dimension",
  incremental: true
})

/** @internal */
export const actualUnitsTotal = Metric.counter("sluice_limiter_actual_units_total", {
  description: "Actual usage settled on reservations (a release settles 0), by limiter and dimension",
  incremental: true
})

/**
 * From −1 (nothing used) in steps of 0.25 to +2 (three times the estimate); larger debts land in
 * the last bucket.
 *
 * @internal
 */
export const estimateErrorRatio = Metric.histogram("sluice_limiter_estimate_error_ratio", {
  boundaries: Metric.linearBoundaries({ start: -1, width: 0.25, count: 13 }),
  description: "Per settled dimension, (actual − estimate) / estimate, by limiter and dimension"
})

/** A metric series' attributes. */
export type Attributes = Readonly<Record<string, string>>

/**
 * The series one limiter records, made once rather than per call, and the registry they go to:
 * the one of the fiber that made the limiter.
 *
 * @internal
 */
export interface Series {
  readonly context: Context.Context<never>
  readonly wait: Metric.Histogram<number>
  readonly lateness: Metric.Histogram<number>
  readonly quota: Metric.Counter<number>
  readonly paused: Metric.Counter<number>
  /** Per dimension. */
  readonly reserved: Readonly<Record<string, Metric.Counter<number>>>
  readonly actual: Readonly<Record<string, Metric.Counter<number>>>
  readonly estimateError: Readonly<Record<string, Metric.Histogram<number>>>
}

const perDimension = <M>(name: string, dimensions: ReadonlyArray<string>, metric: (attributes: Attributes) => M) =>
  Object.fromEntries(dimensions.map((dimension) => [dimension, metric({ name, dimension })]))

/** @internal */
export const seriesOf = (
  name: string,
  dimensions: ReadonlyArray<string>,
  context: Context.Context<never>
): Series => ({
  context,
  wait: Metric.withAttributes(waitSeconds, { name }),
  lateness: Metric.withAttributes(timerLatenessSeconds, { name }),
  quota: Metric.withAttributes(rejectedTotal, { name, reason: "quota" }),
  paused: Metric.withAttributes(rejectedTotal, { name, reason: "paused" }),
  reserved: perDimension(name, dimensions, (attributes) => Metric.withAttributes(reservedUnitsTotal, attributes)),
  actual: perDimension(name, dimensions, (attributes) => Metric.withAttributes(actualUnitsTotal, attributes)),
  estimateError: perDimension(
    name,
    dimensions,
    (attributes) => Metric.withAttributes(estimateErrorRatio, attributes)
  )
})
