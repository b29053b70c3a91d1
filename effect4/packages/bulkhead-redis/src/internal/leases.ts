/**
 * The leases: the renewal beat (renewals, claims after an outage, hand-overs sent again, the
 * acquires given up on), what a lost lease means, and whether a grant is fresh enough to start a
 * call on.
 *
 * @internal
 */
import type { Bulkhead } from "@sluice/bulkhead"
import * as M from "@sluice/core/FleetMessages"
import * as S from "@sluice/core/FleetScripts"
import { int, RETRY_MILLIS } from "@sluice/core/FleetTicket"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Api from "../RedisBulkhead.js"
import { Queue } from "./queue.js"
import * as T from "./ticket.js"

/** @internal */
export abstract class Leases extends Queue {
  /**
   * One beat of the renewal loop: a `resize` Redis missed, the leases of every ticket of this
   * process in one script (which also expires what is due and grants: the safety net for a lost
   * grant message), and the claims of holders Redis may not count. While degraded with nothing to
   * renew, a `stats` read notices that Redis is back. Answers how long to sleep.
   */
  get beat(): Effect.Effect<number> {
    return Effect.suspend(() => {
      const renewing: Array<T.FleetTicket> = []
      const claiming: Array<T.FleetTicket> = []
      const handing: Array<T.FleetTicket> = []
      for (const ticket of this.tickets.values()) {
        if (ticket.state === T.GONE || ticket.lost || ticket.member === "") continue
        // a hand-over Redis may not have heard is sent again rather than claimed: it frees the holder's lease
        if (ticket.needsClaim) (ticket.handedFrom === "" ? claiming : handing).push(ticket)
        else renewing.push(ticket)
      }
      const steps: Array<Effect.Effect<number>> = []
      if (this.resizePending) {
        steps.push(Effect.as(
          Effect.ignore(
            Effect.tap(
              this.beatCall("resize", this.scripts.resize, []),
              () => Effect.sync(() => (this.resizePending = false))
            )
          ),
          this.renewEveryMillis
        ))
      }
      if (renewing.length > 0) steps.push(this.renew(renewing))
      if (claiming.length > 0) steps.push(this.claim(claiming))
      for (const heir of handing) {
        const askedAt = this.clock.currentTimeMillisUnsafe()
        const again = this.submit("hand over", S.HAND_OVER, heir.handedFrom, heir.member)
        steps.push(
          Effect.as(
            Effect.ignore(Effect.flatMap(again, (reply) => this.handedOver(heir, reply, askedAt))),
            this.renewEveryMillis
          )
        )
      }
      if (this.abandoned.size > 0) {
        // no caller may send a batch soon: the beat sends one, and looks again shortly
        if (this.pending.length === 0) this.flush()
        steps.push(Effect.succeed(RETRY_MILLIS))
      } else if (steps.length === 0 && this.degraded) {
        steps.push(Effect.as(Effect.ignore(this.stats), this.renewEveryMillis))
      }
      return Effect.map(
        Effect.all(steps),
        (delays) => delays.reduce((a, b) => Math.min(a, b), this.renewEveryMillis)
      )
    })
  }

  renew(live: ReadonlyArray<T.FleetTicket>): Effect.Effect<number> {
    return Effect.gen({ self: this }, function*() {
      const asked = yield* Clock.currentTimeMillis
      const reply = yield* this.beatCall("renew", this.scripts.renew, live.map((t) => t.member))
      const now = yield* Clock.currentTimeMillis
      const effects: Array<Effect.Effect<void>> = []
      let waiters = false
      live.forEach((ticket, i) => {
        const status = reply[i + 1]
        if (status === "h") {
          if (ticket.state === T.ASKING || ticket.state === T.QUEUED) this.granted(ticket, ticket.member)
          ticket.renewedAt = asked
        } else if (status === "w") {
          waiters = true
          ticket.renewedAt = asked
        } else if (ticket.state === T.QUEUED || ticket.state === T.ASKING) {
          // the waiting lease ended (this process was paused past it, or Redis lost it): it queues again
          this.forget(ticket)
          T.wake(ticket, false)
        } else if (ticket.state !== T.GONE) {
          effects.push(this.leaseLost(ticket, this.renewedLate(ticket, now)))
        }
      })
      yield* Effect.all(effects, { discard: true })
      const next = int(reply[0])
      return waiters && next >= 0 ? Math.min(this.renewEveryMillis, next + 10) : this.renewEveryMillis
    }).pipe(Effect.orElseSucceed(() => RETRY_MILLIS))
  }

  /**
   * Asks Redis to count the holders it may not count: a lease still there is renewed; a missing one
   * is claimed if its permits are free. A fleet holder whose lease is gone and not free has lost it
   * (the lease-lost rule); a fallback holder runs on uncounted and asks again at the next beat.
   */
  claim(holders: ReadonlyArray<T.FleetTicket>): Effect.Effect<number> {
    return Effect.gen({ self: this }, function*() {
      const asked = yield* Clock.currentTimeMillis
      const reply = yield* this.beatCall("claim", this.scripts.claim, holders.map((t) => t.member))
      const now = yield* Clock.currentTimeMillis
      const effects: Array<Effect.Effect<void>> = []
      let unclaimed = 0
      holders.forEach((ticket, i) => {
        if (ticket.state === T.GONE) return
        const status = reply[i + 1]
        if (status === "h" || status === "c") {
          ticket.needsClaim = false
          ticket.state = T.HELD
          ticket.renewedAt = asked
        } else if (ticket.state === T.LOCAL) {
          unclaimed += ticket.cost
        } else {
          ticket.needsClaim = false
          effects.push(this.leaseLost(ticket, this.renewedLate(ticket, now)))
        }
      })
      if (unclaimed > 0 && !this.unclaimedLogged) {
        this.unclaimedLogged = true
        effects.push(Effect.logWarning(M.unclaimed(this.settings.name, unclaimed, this.permits)))
      }
      yield* Effect.all(effects, { discard: true })
      return this.renewEveryMillis
    }).pipe(Effect.orElseSucceed(() => RETRY_MILLIS))
  }

  /** How late the last renewal of a lease found gone was: the usual reason for a lost lease. */
  renewedLate(ticket: T.FleetTicket, now: number): string {
    return M.renewedLate(now - ticket.renewedAt, this.settings.leaseTtlMillis)
  }

  /**
   * Whether a grant may start a call: its lease, counted from when the script that set it was sent
   * (`renewedAt`), has a third of its TTL left by this process's clock, so the next beat renews it
   * in time. A grant read later (the process was paused) may be another's permits by now.
   */
  fresh(ticket: T.FleetTicket, now: number): boolean {
    return now - ticket.renewedAt <= this.handOverFreshMillis
  }

  /** The ticket runs without a lease Redis counts: `why` says how that came about. */
  leaseLost(ticket: T.FleetTicket, why: string): Effect.Effect<void> {
    ticket.lost = true
    this.series.leaseLost.updateUnsafe(1, this.context)
    if (ticket.lostSignal !== undefined) Deferred.doneUnsafe(ticket.lostSignal, Exit.void)
    return Effect.logWarning(M.leaseLost({
      bulkhead: this.settings.name,
      member: ticket.member,
      cost: ticket.cost,
      why,
      fleetPermits: this.permits,
      interrupting: this.settings.onLeaseLost === "interrupt" && ticket.lostSignal !== undefined
    }))
  }

  /** A snapshot of the fleet from Redis (`core.ts`). */
  abstract get stats(): Effect.Effect<Bulkhead.Stats, Api.BulkheadStoreError>
}
