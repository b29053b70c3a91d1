/**
 * The local fallback of `storeDown: "fail-open"` and `"local"`: while Redis cannot answer, calls
 * are admitted by an in-process FIFO bulkhead of `⌊K × localShare⌋` permits (K with `fail-open`),
 * so one process never runs more than its share alone. A holder admitted there is a ticket in the
 * `LOCAL` state with no fleet lease; once Redis answers, the renewal loop claims a lease for it
 * (scripts' `claim`), so it is counted once in the fleet, never twice.
 *
 * @internal
 */
import { Bulkhead } from "@sluice/bulkhead"
import { fallbackMember } from "@sluice/core/FleetTicket"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Scope from "effect/Scope"
import { fallbackTotal } from "./metrics.js"
import { fallbackPermits, type Settings } from "./settings.js"
import * as T from "./ticket.js"

/** @internal */
export class Fallback {
  readonly local: Bulkhead.Bulkhead
  readonly admitted: Metric.Counter<number>
  permits: number

  constructor(readonly settings: Settings, fleetPermits: number, readonly context: Context.Context<never>) {
    this.permits = fallbackPermits(settings, fleetPermits)
    this.admitted = Metric.withAttributes(fallbackTotal, { name: settings.name, policy: settings.storeDown })
    this.local = Bulkhead.makeUnsafe({
      name: settings.name,
      permits: this.permits,
      maxPermits: Math.max(this.permits, fallbackPermits(settings, settings.maxPermits)),
      maxWaiting: settings.maxWaiting,
      maxWait: settings.maxWait
    })
  }

  /**
   * Admits `ticket` on the local bulkhead, waiting at most `remainingMillis` (only the wait is
   * interruptible). A call heavier than the local permits takes them all: it still runs alone.
   */
  admit(
    restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
    ticket: T.FleetTicket,
    remainingMillis: number
  ): Effect.Effect<void, Bulkhead.BulkheadError> {
    return Effect.gen({ self: this }, function*() {
      const scope = yield* Scope.make()
      const exit = yield* Effect.exit(restore(Scope.provide(
        this.local.acquire({
          permits: Math.min(ticket.cost, this.permits),
          maxWait: Number.isFinite(remainingMillis) ? Duration.millis(Math.max(0, remainingMillis)) : undefined
        }),
        scope
      )))
      if (Exit.isFailure(exit)) {
        yield* Scope.close(scope, exit)
        return yield* exit
      }
      ticket.localScope = scope
      ticket.member = fallbackMember(ticket.cost, this.settings.leaseTtlMillis, ticket.nonce)
      ticket.state = T.LOCAL
      ticket.needsClaim = true
      this.admitted.updateUnsafe(1, this.context)
    })
  }

  resize(fleetPermits: number): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.permits = fallbackPermits(this.settings, fleetPermits)
      return this.local.resize(this.permits)
    })
  }
}

/** Gives back the local permits of a ticket admitted on the fallback. @internal */
export const releaseLocal = (ticket: T.FleetTicket): Effect.Effect<void> => {
  const scope = ticket.localScope
  ticket.localScope = undefined
  return scope === undefined ? Effect.void : Scope.close(scope, Exit.void)
}
