/** The distributed bulkhead's own metrics (the local bulkhead's are shared). @internal */
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
