/**
 * A bulkhead's lanes decoded once: the pure queue's policy, and each lane's limits and metric
 * series, made when the lane is first seen.
 *
 * @internal
 */
import type { Policy } from "@sluice/core/LaneQueue"
import { OptionSchema } from "@sluice/options"
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import type * as Lanes from "../BulkheadLanes.js"
import { type Series, seriesOf } from "./metrics.js"
import { illegal, show } from "./validation.js"

const MaxWait = OptionSchema.duration({ zero: true, infinite: true })

const limitsFields = {
  maxWaiting: Schema.optional(OptionSchema.integer({ min: 0, infinite: true })),
  maxWait: Schema.optional(MaxWait)
}

const PriorityLane = Schema.Struct({
  ...limitsFields,
  yieldFor: Schema.optional(OptionSchema.duration({ zero: true, infinite: false }))
})

// a turn adds a lane's weight to its credit, so a head of cost c waits c / weight turns: the bounds
// keep a decision within some hundred turns per permit
const Weight = OptionSchema.number({ min: 0.01, max: 1_000_000 })

const FairShare = Schema.Struct({
  ...limitsFields,
  weights: Schema.optional(Schema.Record(Schema.String, Weight)),
  defaultWeight: Schema.optional(Weight)
})

/** What a lane's calls are held to, and the series they are counted in. */
export interface LaneLimits {
  readonly maxWaiting: number
  readonly maxWait: Duration.Duration | undefined
  readonly series: Series
}

/** A bulkhead's lanes: the policy for the queue, and what each lane is held to. */
export interface Setup {
  readonly policy: Policy
  /** The lane of a call that names none. */
  readonly defaultLane: string
  /** The limits of a lane, made on first sight (fair share) or declared (priority). */
  readonly limitsOf: (lane: string) => LaneLimits
}

const limitsFor = (
  bulkhead: string,
  lane: string,
  maxWaiting: number | undefined,
  maxWait: Duration.Duration | undefined
): LaneLimits => {
  return {
    maxWaiting: maxWaiting ?? Infinity,
    maxWait,
    series: seriesOf({ name: bulkhead, lane })
  }
}

/** A lone surrogate (a string that is not well-formed UTF-16): Redis and metrics would see U+FFFD. */
const loneSurrogate = /\p{Surrogate}/u

/** A lane name that is not well-formed UTF-16 is a defect naming it (escaped). */
const wellFormed = (name: string, lane: string): void => {
  if (loneSurrogate.test(lane)) {
    throw illegal(`bulkhead "${name}": lane ${JSON.stringify(lane)} is not well-formed UTF-16 (a lone surrogate)`)
  }
}

/** Decodes `lanes` for the bulkhead `name`: a bad value is a defect naming the bulkhead and the lane. */
export const decode = (name: string, lanes: Lanes.Lanes): Setup => {
  if (typeof lanes !== "object" || lanes === null || (lanes._tag !== "Priority" && lanes._tag !== "FairShare")) {
    throw illegal(
      `bulkhead "${name}": lanes must come from BulkheadLanes.priority or BulkheadLanes.fairShare, got ${show(lanes)}`
    )
  }
  if (lanes._tag === "FairShare") {
    const options = OptionSchema.decodeSync(FairShare, `bulkhead "${name}" lanes (fairShare)`)(lanes.options)
    const weights = new Map(Object.entries(options.weights ?? {}))
    for (const lane of weights.keys()) wellFormed(name, lane)
    const made = new Map<string, LaneLimits>()
    return {
      policy: { _tag: "fairShare", weights, defaultWeight: options.defaultWeight ?? 1 },
      defaultLane: "default",
      limitsOf: (lane) => {
        let limits = made.get(lane)
        if (limits === undefined) {
          limits = limitsFor(name, lane, options.maxWaiting, options.maxWait)
          made.set(lane, limits)
        }
        return limits
      }
    }
  }
  if (lanes.lanes.length === 0) throw illegal(`bulkhead "${name}": lanes (priority) needs at least one lane`)
  const declared = new Map<string, LaneLimits>()
  const policyLanes = lanes.lanes.map(([lane, settings], rank) => {
    wellFormed(name, lane)
    // JavaScript lists array-index keys ("0", "7", "42", not "07") first, in numeric order: such a
    // name would reorder the lanes
    if (/^(?:0|[1-9]\d*)$/.test(lane) && Number(lane) < 2 ** 32 - 1) {
      throw illegal(`bulkhead "${name}": lane names must not be integers (an object lists them first), got "${lane}"`)
    }
    const decoded = OptionSchema.decodeSync(PriorityLane, `bulkhead "${name}" lane "${lane}"`)(settings)
    if (rank === 0 && decoded.yieldFor !== undefined) {
      throw illegal(`bulkhead "${name}": the first lane ("${lane}") gives way to none, so it takes no yieldFor`)
    }
    if (rank > 0 && decoded.yieldFor === undefined) {
      throw illegal(
        `bulkhead "${name}": lane "${lane}" needs yieldFor, how long its callers give way to the lanes above ` +
          `(without it a saturated higher lane would keep them waiting for ever)`
      )
    }
    declared.set(lane, limitsFor(name, lane, decoded.maxWaiting, decoded.maxWait))
    return { name: lane, yieldForMillis: decoded.yieldFor === undefined ? 0 : Duration.toMillis(decoded.yieldFor) }
  })
  // a lane listed lower that gave way for less would be served before the lane above it
  for (let rank = 2; rank < policyLanes.length; rank++) {
    const above = policyLanes[rank - 1]
    const lane = policyLanes[rank]
    if (lane.yieldForMillis < above.yieldForMillis) {
      throw illegal(
        `bulkhead "${name}": lane "${lane.name}" gives way for ${lane.yieldForMillis}ms, less than ` +
          `"${above.name}" above it (${above.yieldForMillis}ms): lanes are listed highest first, so each ` +
          `yieldFor must be at least the one above`
      )
    }
  }
  return {
    policy: { _tag: "priority", lanes: policyLanes },
    defaultLane: policyLanes[policyLanes.length - 1].name,
    limitsOf: (lane) => declared.get(lane) as LaneLimits
  }
}
