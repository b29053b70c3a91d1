/**
 * One distributed bulkhead in this process: its state and Redis I/O (`transport.ts`), the queue's
 * client side (`queue.ts`), the leases (`leases.ts`), and here what a caller asks of it directly:
 * a cost checked, a timeout error, a resize, stats. The store-down policy's local bulkhead is
 * `storeDown.ts`.
 *
 * @internal
 */
import { Bulkhead, type BulkheadLanes } from "@sluice/bulkhead"
import * as M from "@sluice/core/FleetMessages"
import * as Ticket from "@sluice/core/FleetTicket"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Api from "../RedisBulkhead.js"
import { Leases } from "./leases.js"
import { illegal, isPositiveInteger } from "./settings.js"

/** The lane of a call, under a lane policy: its name, limits, and the bound as the scripts take it. */
export interface Lane {
  readonly name: string
  readonly limits: BulkheadLanes.DecodedLimits
  readonly maxWaitingArg: string
}

/** @internal */
export { loadScripts } from "./transport.js"

/** The most lanes `laneFor` keeps decoded: a fair share's tenants are unbounded. */
const LANE_CACHE = 1000

/** @internal */
export class Impl extends Leases {
  private readonly laneCache = new Map<string, Lane>()

  /** The lane a call goes to (under a lane policy): the one it names, or the default; an unknown one is a defect. */
  laneFor(options: Bulkhead.RunOptions | undefined): Lane | undefined {
    const lanes = this.settings.lanes
    if (lanes === undefined) return undefined
    const name: unknown = options?.lane ?? lanes.defaultLane
    const known = typeof name === "string" ? this.laneCache.get(name) : undefined
    if (known !== undefined) return known
    const limits = typeof name === "string" && name.length > 0 ? lanes.limitsOf(name) : undefined
    // a lone surrogate would reach Redis as U+FFFD, another tenant's lane
    if (typeof name === "string" && /\p{Surrogate}/u.test(name)) {
      throw illegal(`bulkhead "${this.settings.name}": lane ${JSON.stringify(name)} is not well-formed UTF-16`)
    }
    if (typeof name !== "string" || limits === undefined) {
      const declared = lanes.policy._tag === "priority" ? lanes.policy.lanes.map((lane) => lane.name) : []
      throw illegal(M.noLane(this.settings.name, name, declared))
    }
    const lane = { name, limits, maxWaitingArg: Ticket.maxWaitingArg(limits.maxWaiting) }
    // full: begun anew (a lane dropped is decoded again on its next call)
    if (this.laneCache.size >= LANE_CACHE) this.laneCache.clear()
    this.laneCache.set(name, lane)
    return lane
  }

  /** `Bulkhead.laneOf`: the lane a call naming `name` waits in, and its budget. */
  laneInfo(name: string | undefined): BulkheadLanes.LaneInfo | undefined {
    const lanes = this.settings.lanes
    if (lanes === undefined) return undefined
    const lane = name ?? lanes.defaultLane
    const limits = lane.length === 0 ? undefined : lanes.limitsOf(lane)
    return limits === undefined ? undefined : { name: lane, maxWait: limits.maxWait ?? this.settings.maxWait }
  }

  costOf(options: Bulkhead.RunOptions | undefined): number {
    const cost = options?.permits ?? options?.cost ?? 1
    if (!isPositiveInteger(cost) || cost > this.settings.maxPermits) {
      throw illegal(M.badCost(this.settings.name, this.settings.maxPermits, cost))
    }
    return cost
  }

  timeoutError(
    cost: number,
    waited: Duration.Duration,
    permits: number,
    inFlight: number,
    ahead: number,
    lane?: Lane | undefined
  ): Bulkhead.PermitWaitTimeout {
    ;(lane?.limits.series.timeout ?? this.series.timeout).updateUnsafe(1, this.context)
    return new Bulkhead.PermitWaitTimeout({
      bulkhead: this.settings.name,
      ...(lane === undefined ? {} : { lane: lane.name }),
      waited,
      requested: cost,
      cost,
      permits,
      inFlight,
      aheadWhenQueued: ahead
    })
  }

  resize(permits: number): Effect.Effect<void, Api.BulkheadStoreError> {
    return Effect.suspend(() => {
      if (!isPositiveInteger(permits) || permits > this.settings.maxPermits) {
        return Effect.die(illegal(M.badResize(this.settings.name, this.settings.maxPermits, permits)))
      }
      // a shrink ends the hand-overs until a reply to a script sent after it says the permits in use fit
      this.resizes++
      if (permits < this.permits) this.shrinking = true
      this.permits = permits
      const sent = this.call("resize", this.scripts.resize, []).pipe(
        Effect.tap(() => Effect.sync(() => (this.resizePending = false))),
        Effect.asVoid
      )
      const fallback = this.fallback
      if (fallback === undefined) return sent
      // a fallback policy never fails a resize: Redis hears it at the next beat that reaches it
      return Effect.andThen(
        fallback.resize(permits),
        Effect.catch(sent, () => Effect.sync(() => (this.resizePending = true)))
      )
    })
  }

  get stats(): Effect.Effect<Bulkhead.Stats, Api.BulkheadStoreError> {
    return Effect.map(this.call("stats", this.scripts.stats, []), (reply) => {
      const counts = Ticket.statsOf(reply)
      const stats: Bulkhead.Stats = {
        name: this.settings.name,
        permits: counts.permits,
        maxPermits: this.settings.maxPermits,
        inFlight: counts.inFlight,
        holders: counts.holders,
        waiting: counts.waiting,
        waitingPermits: counts.waitingPermits,
        maxWaiting: this.settings.maxWaiting,
        ...(this.settings.lanes === undefined ? {} : { lanes: this.laneStats(reply[5]) })
      }
      this.lastStats = stats
      return stats
    })
  }

  /**
   * The lanes of a stats reply (`{lane, waiting, waitingPermits, granted}` each, fleet-wide), with
   * a fair share's weights; the waiting gauge of each lane is set from it.
   */
  laneStats(reply: unknown): ReadonlyArray<BulkheadLanes.LaneStats> {
    const lanes = this.settings.lanes
    if (lanes === undefined) return []
    return Ticket.lanesOf(reply).map((lane) => {
      const limits = lanes.limitsOf(lane.name)
      if (limits !== undefined) limits.series.waiting.updateUnsafe(lane.waiting, this.context)
      const weight = lanes.policy._tag === "fairShare"
        ? lanes.policy.weights.get(lane.name) ?? lanes.policy.defaultWeight
        : undefined
      return weight === undefined ? lane : { ...lane, weight }
    })
  }
}
