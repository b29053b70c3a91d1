/**
 * A provider's lanes as its stats report them: each lane the bulkhead reports, with the
 * provider's attempts and permit waits in it, and one sentence with the share of the permits it
 * got (against its weight's share, under fair share). Both Effect lines build `stats.lanes` here.
 *
 * @since 0.4.0
 */
import type { LaneWaits } from "./Samples.js"
import { ms, percent } from "./Verdict.js"

/**
 * One lane as the bulkhead counts it.
 *
 * @since 0.4.0
 * @category models
 */
export interface LaneCounts {
  readonly name: string
  /** Permits granted in the lane since the bulkhead was made. */
  readonly granted: number
  /** Callers waiting in the lane now. */
  readonly waiting: number
  /** Fair share only: the lane's weight. */
  readonly weight?: number | undefined
}

/**
 * A phase's summary, in milliseconds.
 *
 * @since 0.4.0
 * @category models
 */
export interface PhaseSummary {
  readonly count: number
  readonly meanMillis: number
  readonly p50Millis: number
  readonly p95Millis: number
}

/**
 * One lane's summary: the shape of `ProviderStats.LaneSummary` on both lines.
 *
 * @since 0.4.0
 * @category models
 */
export interface LaneSummary {
  readonly lane: string
  readonly attempts: number
  readonly permitWait: PhaseSummary
  readonly share: number
  readonly weightShare?: number | undefined
  readonly waiting: number
  readonly reason: string
}

/**
 * Each of `lanes` with the attempts and permit waits `waits` holds for it: its share of the
 * permits granted, and, while it has callers waiting, its weight over the weights of the lanes
 * with callers waiting now (an idle lane's share goes to the others).
 *
 * @since 0.4.0
 * @category constructors
 */
export const laneSummaries = (waits: LaneWaits, lanes: ReadonlyArray<LaneCounts>): ReadonlyArray<LaneSummary> => {
  let granted = 0
  let weights = 0
  for (const lane of lanes) {
    granted += lane.granted
    if (lane.waiting > 0) weights += lane.weight ?? 0
  }
  return lanes.map((lane) => {
    const entry = waits.lanes.get(lane.name)
    const permitWait = entry?.waits.summary() ?? { count: 0, meanMillis: 0, p50Millis: 0, p95Millis: 0 }
    const share = granted === 0 ? 0 : lane.granted / granted
    const weightShare = lane.weight === undefined || lane.waiting === 0 ? undefined : lane.weight / weights
    const attempts = entry?.attempts ?? 0
    const against = weightShare === undefined ? "" : ` for a weight of ${percent(weightShare)}`
    const reason = attempts === 0
      ? `lane "${lane.name}": no attempts yet, ${percent(share)} of the permits${against}`
      : `lane "${lane.name}": ${attempts} attempt${attempts === 1 ? "" : "s"}, ${
        percent(share)
      } of the permits${against}; permit wait p50 ${ms(permitWait.p50Millis)}, p95 ${ms(permitWait.p95Millis)}`
    return {
      lane: lane.name,
      attempts,
      permitWait,
      share,
      ...(weightShare === undefined ? {} : { weightShare }),
      waiting: lane.waiting,
      reason
    }
  })
}
