/**
 * The bulkhead's metrics, labelled `name` (and `lane` for a bulkhead with lanes).
 *
 * @internal
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"

/**
 * Buckets from 0.5 ms doubling to about 65 s: fine enough to see a permit wait appear under a
 * millisecond, wide enough for a batch queued for a minute.
 *
 * @internal
 */
export const waitBoundaries = MetricBoundaries.exponential({ start: 0.0005, factor: 2, count: 19 })

/** @internal */
export const permitWaitSeconds = Metric.histogram(
  "sluice_permit_wait_seconds",
  waitBoundaries,
  "Time a call waited for a bulkhead permit, in seconds (0 when a permit was free)"
)
/** @internal */
export const inFlightGauge = Metric.gauge("sluice_bulkhead_in_flight", {
  description: "Bulkhead permits held right now"
})
/** @internal */
export const waitingGauge = Metric.gauge("sluice_bulkhead_waiting", {
  description: "Callers queued for a bulkhead permit right now"
})
/** @internal */
export const permitsGauge = Metric.gauge("sluice_bulkhead_permits", {
  description: "The bulkhead's current number of permits"
})
/** @internal */
export const rejectedTotal = Metric.counter("sluice_bulkhead_rejected_total", {
  description: "Calls refused by a bulkhead, by reason (full: the queue was at maxWaiting; timeout: maxWait elapsed)",
  incremental: true
})
