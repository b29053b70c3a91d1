import type { Bulkhead } from "@sluice/bulkhead"
import { Effect } from "effect"

export { metricOf, uniqueName } from "@sluice/test-utils/metrics"
export { room } from "@sluice/test-utils/provider"
export { yieldTurns } from "@sluice/test-utils/turns"

/** Asserts that a bulkhead is back to rest: nothing held and nobody queued. */
export const expectIdle = (bulkhead: Bulkhead.Bulkhead): Effect.Effect<void> =>
  Effect.flatMap(bulkhead.stats, (stats) =>
    stats.inFlight === 0 && stats.holders === 0 && stats.waiting === 0
      ? Effect.void
      : Effect.dieMessage(`bulkhead not idle: ${JSON.stringify(stats)}`))

/** The current TestClock time in milliseconds. */
export const now: Effect.Effect<number> = Effect.clockWith((clock) => clock.currentTimeMillis)
