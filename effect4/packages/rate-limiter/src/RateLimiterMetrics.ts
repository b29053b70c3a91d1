/**
 * A rate limiter's metrics, shared by every limiter: labelled by the limiter's `name`, and by
 * `dimension` where usage is measured. `RateLimiter` re-exports them.
 *
 * @since 2.0.0
 */
import type * as Metric from "effect/Metric"
import * as metrics from "./internal/metrics.js"

/**
 * `sluice_limiter_wait_seconds`: per take that started, the time from the store's decision to the
 * start (the store's round trip excluded), by `name`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const waitSeconds: Metric.Histogram<number> = metrics.waitSeconds

/**
 * `sluice_limiter_rejected_total`: takes refused because the start would come later than
 * `maxWait`, by `name` and `reason` (`quota` or `paused`).
 *
 * @since 2.0.0
 * @category metrics
 */
export const rejectedTotal: Metric.Counter<number> = metrics.rejectedTotal

/**
 * `sluice_limiter_timer_lateness_seconds`: per caller that slept, how late it woke after its
 * reserved start, by `name`. What the cross-process bound `limit + burst + rate × lateness` reads.
 *
 * @since 2.0.0
 * @category metrics
 */
export const timerLatenessSeconds: Metric.Histogram<number> = metrics.timerLatenessSeconds

/**
 * `sluice_limiter_reserved_units_total`: units reserved by `reserve` (the estimates), by `name`
 * and `dimension`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const reservedUnitsTotal: Metric.Counter<number> = metrics.reservedUnitsTotal

/**
 * `sluice_limiter_actual_units_total`: the actual usage settled (a release settles 0), by `name`
 * and `dimension`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const actualUnitsTotal: Metric.Counter<number> = metrics.actualUnitsTotal

/**
 * `sluice_limiter_estimate_error_ratio`: per settled dimension with an estimate above 0,
 * `(actual − estimate) / estimate`: 0 is exact, below 0 over-estimated (given back), above 0 a
 * debt later starts pay. By `name` and `dimension`; releases are not counted.
 *
 * @since 2.0.0
 * @category metrics
 */
export const estimateErrorRatio: Metric.Histogram<number> = metrics.estimateErrorRatio
