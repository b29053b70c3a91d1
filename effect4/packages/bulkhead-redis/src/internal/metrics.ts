/** The distributed bulkhead's own metrics (the local bulkhead's are shared), and one instance's series. @internal */
import { Bulkhead } from "@sluice/bulkhead"
import * as Metric from "effect/Metric"

/** @internal */
export const leaseLostTotal = Metric.counter("sluice_bulkhead_lease_lost_total", {
  description: "Leases of a distributed bulkhead that their holder found gone at renewal (paused past the lease TTL)",
  incremental: true
})

/** @internal */
export const storeDegraded = Metric.gauge("sluice_bulkhead_store_degraded", {
  description: "1 while a distributed bulkhead cannot reach Redis"
})

/** @internal */
export const storeErrorsTotal = Metric.counter("sluice_bulkhead_store_errors_total", {
  description: "Commands of a distributed bulkhead that Redis did not answer",
  incremental: true
})

/** @internal */
export const fallbackTotal = Metric.counter("sluice_bulkhead_fallback_total", {
  description:
    "Calls a distributed bulkhead admitted on its local fallback (storeDown fail-open or local) while Redis was down",
  incremental: true
})

/** The series one bulkhead records under its name, made once rather than per call. @internal */
export interface Series {
  readonly permitWait: Metric.Histogram<number>
  readonly full: Metric.Counter<number>
  readonly timeout: Metric.Counter<number>
  readonly leaseLost: Metric.Counter<number>
  readonly storeErrors: Metric.Counter<number>
  readonly degraded: Metric.Gauge<number>
}

/** @internal */
export const seriesOf = (name: string): Series => ({
  permitWait: Metric.withAttributes(Bulkhead.permitWaitSeconds, { name }),
  full: Metric.withAttributes(Bulkhead.rejectedTotal, { name, reason: "full" }),
  timeout: Metric.withAttributes(Bulkhead.rejectedTotal, { name, reason: "timeout" }),
  leaseLost: Metric.withAttributes(leaseLostTotal, { name }),
  storeErrors: Metric.withAttributes(storeErrorsTotal, { name }),
  degraded: Metric.withAttributes(storeDegraded, { name })
})
