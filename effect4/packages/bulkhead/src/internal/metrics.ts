/**
 * The bulkhead's metrics, with the attribute `name` (and `lane` for a bulkhead with lanes).
 *
 * @internal
 */
import * as Metric from "effect/Metric"

/**
 * Buckets from 0.5 ms doubling to about 65 s: fine enough to see a permit wait appear under a
 * millisecond, wide enough for a batch queued for a minute.
 *
 * @internal
 */
export const waitBoundaries = Metric.exponentialBoundaries({ start: 0.0005, factor: 2, count: 19 })

/** @internal */
export const permitWaitSeconds = Metric.histogram("sluice_permit_wait_seconds", {
  boundaries: waitBoundaries,
  description: "Time a call waited for a bulkhead permit, in seconds (0 when a permit was free)"
})
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

/** A metric series' attributes. */
export type Attributes = Readonly<Record<string, string>>

/**
 * The series one bulkhead (or one of its lanes) records under its attributes, made once rather
 * than per call.
 *
 * @internal
 */
export interface Series {
  readonly permitWait: Metric.Histogram<number>
  readonly waiting: Metric.Gauge<number>
  readonly full: Metric.Counter<number>
  readonly timeout: Metric.Counter<number>
}

/** @internal */
export const seriesOf = (attributes: Attributes): Series => ({
  permitWait: Metric.withAttributes(permitWaitSeconds, attributes),
  waiting: Metric.withAttributes(waitingGauge, attributes),
  full: Metric.withAttributes(rejectedTotal, { ...attributes, reason: "full" }),
  timeout: Metric.withAttributes(rejectedTotal, { ...attributes, reason: "timeout" })
})
