/**
 * A rate limiter's metrics, shared by every limiter (labelled by name, and by dimension where
 * usage is measured).
 *
 * @internal
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"

/**
 * From 0.5 ms doubling to ~131 s: a paced start waits milliseconds; longer waits (behind a daily
 * quota) land in the last bucket.
 *
 * @internal
 */
export const waitSeconds = Metric.histogram(
  "sluice_limiter_wait_seconds",
  MetricBoundaries.exponential({ start: 0.0005, factor: 2, count: 20 }),
  "Time from the store's decision to the start, in seconds, per rate limiter"
)

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
export const timerLatenessSeconds = Metric.histogram(
  "sluice_limiter_timer_lateness_seconds",
  MetricBoundaries.exponential({ start: 0.0001, factor: 2, count: 16 }),
  "How late each timer of a rate limiter fired after the instant it was set for, in seconds"
)

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
export const estimateErrorRatio = Metric.histogram(
  "sluice_limiter_estimate_error_ratio",
  MetricBoundaries.linear({ start: -1, width: 0.25, count: 13 }),
  "Per settled dimension, (actual − estimate) / estimate, by limiter and dimension"
)
