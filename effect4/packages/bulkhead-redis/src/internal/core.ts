/**
 * One distributed bulkhead in this process: its state and Redis I/O (`transport.ts`), the queue's
 * client side (`queue.ts`), the leases (`leases.ts`), and here what a caller asks of it directly:
 * a cost checked, a timeout error, a resize, stats. The store-down policy's local bulkhead is
 * `storeDown.ts`.
 *
 * @internal
 */
import { Bulkhead } from "@sluice/bulkhead"
import * as M from "@sluice/core/FleetMessages"
import * as Ticket from "@sluice/core/FleetTicket"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Api from "../RedisBulkhead.js"
import { Leases } from "./leases.js"
import { illegal, isPositiveInteger } from "./settings.js"

/** @internal */
export { loadScripts } from "./transport.js"

/** @internal */
export class Impl extends Leases {
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
    ahead: number
  ): Bulkhead.PermitWaitTimeout {
    this.series.timeout.updateUnsafe(1, this.context)
    return new Bulkhead.PermitWaitTimeout({
      bulkhead: this.settings.name,
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
        maxWaiting: this.settings.maxWaiting
      }
      this.lastStats = stats
      return stats
    })
  }
}
