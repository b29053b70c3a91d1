/**
 * Lanes: several kinds of callers on one bulkhead, one pool of permits. A call names its lane
 * (`bulkhead.run(effect, { lane: "interactive" })`) and the bulkhead's policy decides which
 * lane's waiter a released permit goes to:
 *
 * - `priority`: lanes listed highest first; a lower lane's waiter gives way for its lane's
 *   `yieldFor`, then ranks with a caller of the first lane arriving now. A waiter's due time is
 *   when it queued plus its lane's `yieldFor`, and the earliest due goes first: interactive calls
 *   pass a batch's queue, and a batch call still waits a bounded time however many come.
 * - `fairShare`: lanes are tenants, made on first sight; under contention each busy lane gets
 *   permits in proportion to its weight (deficit round-robin), and an idle lane's share goes to
 *   the others.
 *
 * Within a lane waiters are FIFO, and the waiter chosen next that does not fit the free permits
 * stops every grant behind it, so a heavy call is never overtaken. The rules and their bounds:
 * docs/semantics.md, "Lanes".
 *
 * @since 0.4.0
 */
import type * as LaneQueue from "@sluice/core/LaneQueue"
import type * as Duration from "effect/Duration"
import type * as MetricLabel from "effect/MetricLabel"
import * as internal from "./internal/lanes.js"

/**
 * A lane's own limits. `maxWaiting` bounds the lane's queue (the bulkhead's `maxWaiting` bounds
 * the whole); `maxWait` replaces the bulkhead's budget for the lane's calls (a call's own
 * `maxWait` replaces both).
 *
 * @since 0.4.0
 * @category models
 */
export interface LaneLimits {
  readonly maxWaiting?: number | undefined
  readonly maxWait?: Duration.DurationInput | undefined
}

/**
 * A lane of a `priority` policy. Every lane but the first needs `yieldFor`: how long its callers
 * give way to the lanes above before they rank with them. (Without it a saturated higher lane
 * would keep them waiting for ever.)
 *
 * @since 0.4.0
 * @category models
 */
export interface PriorityLane extends LaneLimits {
  readonly yieldFor?: Duration.DurationInput | undefined
}

/**
 * @since 0.4.0
 * @category models
 */
export interface FairShareOptions extends LaneLimits {
  /**
   * Weights of named lanes, each from 0.01 to 1,000,000 (a turn adds a lane's weight to its credit,
   * in permits). A lane not named here has `defaultWeight`.
   */
  readonly weights?: Readonly<Record<string, number>> | undefined
  /** The weight of a lane not in `weights`, from 0.01 to 1,000,000. Default 1. */
  readonly defaultWeight?: number | undefined
}

/**
 * A bulkhead's lane policy, made by `priority` or `fairShare` and decoded with the bulkhead's other
 * options (a bad value is a defect naming the bulkhead and the lane).
 *
 * @since 0.4.0
 * @category models
 */
export type Lanes =
  | { readonly _tag: "Priority"; readonly lanes: ReadonlyArray<readonly [name: string, lane: PriorityLane]> }
  | { readonly _tag: "FairShare"; readonly options: FairShareOptions }

/**
 * Lanes by priority, highest first, in the order the object lists them; each lane's `yieldFor` is
 * at least the one above it's (else the lower lane would be served first).
 *
 * @example
 * ```ts
 * import { Bulkhead, BulkheadLanes } from "@sluice/bulkhead"
 *
 * const bulkhead = Bulkhead.unsafeMake({
 *   name: "openai",
 *   permits: 8,
 *   lanes: BulkheadLanes.priority({
 *     interactive: { maxWait: "2 seconds" },
 *     batch: { yieldFor: "30 seconds" }
 *   })
 * })
 * ```
 *
 * @since 0.4.0
 * @category constructors
 */
export const priority = (lanes: Readonly<Record<string, PriorityLane>>): Lanes => ({
  _tag: "Priority",
  lanes: Object.entries(lanes)
})

/**
 * Lanes as tenants sharing the permits by weight. A lane is made the first time a call names it,
 * refused or not, and kept for the bulkhead's life, with a `lane` label on its metrics: name lanes
 * by tenant, never by request or user input without a bound.
 *
 * @since 0.4.0
 * @category constructors
 */
export const fairShare = (options: FairShareOptions = {}): Lanes => ({ _tag: "FairShare", options })

/**
 * The lane of a call that names none: under `priority`, the last lane; under `fairShare`, this one.
 *
 * @since 0.4.0
 * @category constants
 */
export const defaultLane = "default"

/**
 * Where a call waits in a bulkhead with lanes (`Bulkhead.laneOf`): its lane and that lane's
 * budget.
 *
 * @since 0.4.0
 * @category models
 */
export interface LaneInfo {
  readonly name: string
  /** The lane's `maxWait`, else the bulkhead's (`Duration.infinity` when unbounded). */
  readonly maxWait: Duration.Duration
}

/**
 * One lane's counters, in `Bulkhead.Stats.lanes`.
 *
 * @since 0.4.0
 * @category models
 */
export interface LaneStats {
  readonly name: string
  /** Callers queued in the lane, and the permits they ask for. */
  readonly waiting: number
  readonly waitingPermits: number
  /** Permits granted to the lane's calls since the bulkhead was made: its share, against the others'. */
  readonly granted: number
  /** `fairShare`: the lane's weight, what its share is due against the other busy lanes'. */
  readonly weight?: number | undefined
}

/**
 * A lane policy decoded for a bulkhead named `name`: the queue's policy, the default lane, and each
 * lane's limits and metric labels (`limitsOf`, made on first sight under a fair share; `undefined`
 * for a lane a priority policy does not declare).
 *
 * @since 0.4.0
 * @category models
 */
export interface Decoded {
  readonly policy: LaneQueue.Policy
  readonly defaultLane: string
  readonly limitsOf: (lane: string) => DecodedLimits | undefined
}

/**
 * One lane's decoded limits (`Decoded.limitsOf`): its queue bound (`Infinity` when unbounded), its
 * `maxWait` if it sets one, and the labels its permit waits, waiting gauge and refusals go under.
 *
 * @since 0.4.0
 * @category models
 */
export interface DecodedLimits {
  readonly maxWaiting: number
  readonly maxWait: Duration.Duration | undefined
  readonly labels: ReadonlyArray<MetricLabel.MetricLabel>
  readonly fullLabels: ReadonlyArray<MetricLabel.MetricLabel>
  readonly timeoutLabels: ReadonlyArray<MetricLabel.MetricLabel>
}

/**
 * Decodes `lanes` for the bulkhead `name` as the local bulkhead does, so that a bulkhead kept
 * elsewhere (the fleet's, on Redis) refuses the same values with the same sentences: a bad value
 * throws an `IllegalArgumentException` naming the bulkhead and the lane.
 *
 * @since 0.4.0
 * @category decoding
 */
export const decode = (name: string, lanes: Lanes): Decoded => {
  const setup = internal.decode(name, lanes)
  const declared = setup.policy._tag === "priority" ? new Set(setup.policy.lanes.map((lane) => lane.name)) : undefined
  return {
    policy: setup.policy,
    defaultLane: setup.defaultLane,
    limitsOf: (lane) => (declared === undefined || declared.has(lane) ? setup.limitsOf(lane) : undefined)
  }
}
