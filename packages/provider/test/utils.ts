import type { Bulkhead } from "@sluice/bulkhead"
import { Effect, Metric, MetricLabel } from "effect"

let counter = 0
/** A provider name no other test uses: metrics live in one global registry. */
export const uniqueName = (prefix: string): string => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`

/** Lets every runnable fiber take `turns` scheduler turns. */
export const settle = (turns = 20): Effect.Effect<void> => Effect.repeatN(Effect.yieldNow(), turns)

/** The value of a metric for one provider (and optional extra labels). */
export const metricOf = <Type, In, Out>(
  metric: Metric.Metric<Type, In, Out>,
  name: string,
  extra: Record<string, string> = {}
): Effect.Effect<Out> =>
  Metric.value(
    Metric.taggedWithLabels(metric, [
      MetricLabel.make("name", name),
      ...Object.entries(extra).map(([k, v]) => MetricLabel.make(k, v))
    ])
  )

/** Asserts that a bulkhead is back to rest: nothing held and nobody queued. */
export const expectIdle = (bulkhead: Bulkhead.Bulkhead): Effect.Effect<void> =>
  Effect.flatMap(bulkhead.stats, (stats) =>
    stats.inFlight === 0 && stats.holders === 0 && stats.waiting === 0
      ? Effect.void
      : Effect.dieMessage(`bulkhead not idle: ${JSON.stringify(stats)}`))

/** The current TestClock time in milliseconds. */
export const now: Effect.Effect<number> = Effect.clockWith((clock) => clock.currentTimeMillis)
