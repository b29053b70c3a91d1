/**
 * One distributed bulkhead in this process: its state and Redis I/O (`transport.ts`), the queue's
 * client side (`queue.ts`), the leases (`leases.ts`), and here what a caller asks of it directly:
 * a cost checked, a timeout error, a resize, stats. The store-down policy's local bulkhead is
 * `storeDown.ts`.
 *
 * @internal
 */
import { Bulkhead } from "@sluice/bulkhead"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Api from "../RedisBulkhead.js"
import { Leases } from "./leases.js"
import { illegal, isPositiveInteger } from "./settings.js"
import { int } from "./transport.js"

/** @internal */
export { loadScripts } from "./transport.js"

/** @internal */
export class Impl extends Leases {
  costOf(options: Bulkhead.RunOptions | undefined): number {
    const cost = options?.permits ?? options?.cost ?? 1
    if (!isPositiveInteger(cost) || cost > this.settings.maxPermits) {
      throw illegal(
        `bulkhead "${this.settings.name}": permits must be an integer from 1 to maxPermits (${this.settings.maxPermits}), got ${cost}`
      )
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
    Bulkhead.rejectedTotal.unsafeUpdate(1, this.timeoutLabels)
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
        return Effect.die(
          illegal(
            `bulkhead "${this.settings.name}": resize needs an integer from 1 to maxPermits (${this.settings.maxPermits}), got ${permits}`
          )
        )
      }
      // a shrink ends the hand-overs until a reply to a script sent after it says the permits in use fit
      this.resizes++
      if (permits < this.permits) this.shrinking = true
      this.permits = permits
      const sent = this.call("resize", this.scripts.resize, []).pipe(
        Effect.tap(() => (this.resizePending = false)),
        Effect.asVoid
      )
      const fallback = this.fallback
      if (fallback === undefined) return sent
      // a fallback policy never fails a resize: Redis hears it at the next beat that reaches it
      return Effect.zipRight(
        fallback.resize(permits),
        Effect.catchAll(sent, () => Effect.sync(() => (this.resizePending = true)))
      )
    })
  }

  get stats(): Effect.Effect<Bulkhead.Stats, Api.BulkheadStoreError> {
    return Effect.map(this.call("stats", this.scripts.stats, []), (reply) => {
      const stats: Bulkhead.Stats = {
        name: this.settings.name,
        permits: int(reply[0]),
        maxPermits: this.settings.maxPermits,
        inFlight: int(reply[1]),
        holders: int(reply[2]),
        waiting: int(reply[3]),
        waitingPermits: int(reply[4]),
        maxWaiting: this.settings.maxWaiting
      }
      this.lastStats = stats
      return stats
    })
  }
}
