/** @internal */
import type { Bulkhead } from "@sluice/bulkhead"
import { laneSummaries as summaries } from "@sluice/core/LaneSummaries"
import type { LaneWaits } from "@sluice/core/Samples"
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
 * Each lane the bulkhead reports, with the provider's attempts and permit waits in it (the core's
 * `laneSummaries`, shared by both Effect lines).
 *
 * @internal
 */
export const laneSummaries = (
  waits: LaneWaits,
  bulkhead: Bulkhead.Stats
): ReadonlyArray<Api.LaneSummary> => summaries(waits, bulkhead.lanes ?? [])
