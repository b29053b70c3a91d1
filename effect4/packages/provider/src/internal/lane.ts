/** @internal */
import type { Bulkhead } from "@sluice/bulkhead"
import type { LaneWaits } from "@sluice/core/Samples"
import { ms, percent } from "@sluice/core/Verdict"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type * as Api from "../ProviderStats.js"

/**
 * The lane set by `Provider.withLane` for the calls an effect makes through any provider: read
 * once per call, where the call starts (a call's own `lane` option wins).
 *
 * @internal
 */
export const CurrentLane: Context.Reference<string | undefined> = Context.Reference<string | undefined>(
  "@sluice/provider/CurrentLane",
  { defaultValue: () => undefined }
)

/** @internal */
export const withLane = dual<
  (lane: string) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
  <A, E, R>(self: Effect.Effect<A, E, R>, lane: string) => Effect.Effect<A, E, R>
>(2, (self, lane) => Effect.provideService(self, CurrentLane, lane))

/**
 * Each lane the bulkhead reports, with the provider's attempts and permit waits in it, and one
 * sentence: the share of the permits it got (against its weight's share, under fair share).
 *
 * @internal
 */
export const laneSummaries = (
  waits: LaneWaits,
  bulkhead: Bulkhead.Stats
): ReadonlyArray<Api.LaneSummary> => {
  const lanes = bulkhead.lanes ?? []
  let granted = 0
  let weights = 0
  for (const lane of lanes) {
    granted += lane.granted
    // due shares are among the lanes busy now: an idle lane's goes to the others
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
