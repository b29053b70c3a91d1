/**
 * Metrics live in one global registry for the whole process: a test names its bulkhead or provider
 * uniquely, then reads a metric by that name.
 */
import type { Effect } from "effect"
import { Metric, MetricLabel } from "effect"

let counter = 0
/** A name (of a bulkhead, a provider) no other test uses. */
export const uniqueName = (prefix: string): string => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`

/** The value of a metric for one bulkhead or provider, by its `name` label (and optional extra labels). */
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
