/**
 * The queue's client side: the tickets this instance has queued in Redis, their grants (in a reply,
 * by message), releases, and the hand-over of a holder's permits to the instance's oldest waiter.
 *
 * @internal
 */
import * as S from "@sluice/core/FleetScripts"
import * as Effect from "effect/Effect"
import type * as Api from "../RedisBulkhead.js"
import { releaseLocal } from "./storeDown.js"
import * as T from "./ticket.js"
import { int, isArray, type Pending, Transport } from "./transport.js"

/** @internal */
export abstract class Queue extends Transport {
  /**
   * A ticket that an acquire's reply queued starts waiting, unless a grant came first; its waiting
   * lease counts from `sentAt`, when the script was sent (however late its reply is read).
   */
  queued(op: Pending, reply: unknown, sentAt: number): void {
    if (op.code !== S.ACQUIRE || !isArray(reply) || int(reply[0]) !== S.ACQUIRE_QUEUED) return
    const ticket = this.tickets.get(op.id)
    if (ticket === undefined || ticket.state !== T.ASKING) return
    ticket.member = String(reply[1])
    ticket.state = T.QUEUED
    ticket.renewedAt = sentAt
    const number = T.numberOf(ticket)
    this.waiting.set(ticket.nonce, ticket)
    if (number > this.lastWaiting) this.lastWaiting = number
    // out of order (a reply overtaken by a later one, or a counter that Redis lost): sorted again
    else this.sortWaiting()
  }

  sortWaiting(): void {
    const sorted = [...this.waiting.values()].sort((a, b) => T.numberOf(a) - T.numberOf(b))
    this.waiting.clear()
    for (const ticket of sorted) this.waiting.set(ticket.nonce, ticket)
    this.lastWaiting = sorted.length === 0 ? 0 : T.numberOf(sorted[sorted.length - 1])
  }

  /**
   * Whether the fleet holds more permits than K, from a batch's last reply: an acquire answers
   * `{kind, member, used, permits, ...}`, a release or hand-over `{state, used, permits}`.
   */
  counted(op: Pending, reply: unknown, resizes: number): void {
    if (!isArray(reply)) return
    const acquire = op.code === S.ACQUIRE || op.code === S.TRY_ACQUIRE
    if (int(reply[acquire ? 2 : 1]) > int(reply[acquire ? 3 : 2])) this.shrinking = true
    // a resize Redis has not heard yet (sent again at the beat) is not answered by this reply either
    else if (resizes === this.resizes && !this.resizePending) this.shrinking = false
  }

  /** A grant message: the limit of this instance's head run, then one member per granted ticket. */
  onGrants(message: string): void {
    const words = message.split(" ")
    for (let i = 1; i < words.length; i++) this.grantedMember(words[i])
    // a lower limit than the one held is older news; a higher one is still true (tickets only join at the back)
    this.runLimit = Math.max(this.runLimit, int(words[0]))
  }

  grantedMember(member: string): void {
    const ticket = this.tickets.get(member.slice(member.lastIndexOf(":") + 1))
    if (ticket !== undefined) this.granted(ticket, member)
  }

  granted(ticket: T.FleetTicket, member: string): void {
    if (ticket.state !== T.ASKING && ticket.state !== T.QUEUED) return
    ticket.member = member
    ticket.state = T.GRANTED
    this.waiting.delete(ticket.nonce)
    T.wake(ticket, true)
  }

  forget(ticket: T.FleetTicket): void {
    ticket.state = T.GONE
    this.tickets.delete(ticket.nonce)
    this.waiting.delete(ticket.nonce)
  }

  /**
   * Gives the ticket's permits back (the fallback's and the fleet's), or takes it off the queue:
   * exactly once, never failing. When Redis cannot answer, the lease ends on its own within the
   * TTL. A lost lease, or a fallback holder Redis never counted, is not released in Redis: it is
   * not there, and fencing would make the release a no-op anyway. A holder whose permits the
   * fleet's oldest waiter can take hands them to it here (`heirOf`).
   */
  release(ticket: T.FleetTicket): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (ticket.state === T.GONE) return Effect.void
      const skipRedis = ticket.lost || ticket.member === "" || ticket.state === T.LOCAL
      const heir = skipRedis ? undefined : this.heirOf(ticket, this.clock.unsafeCurrentTimeMillis())
      this.forget(ticket)
      const fleet = skipRedis
        ? Effect.void
        : heir !== undefined
        ? this.handOver(ticket, heir)
        : Effect.ignore(this.submit("release", S.RELEASE, ticket.member, ""))
      // the fallback's permits first, when the call holds some
      return ticket.localScope === undefined ? fleet : Effect.zipRight(releaseLocal(ticket), fleet)
    })
  }

  /**
   * The waiter a holder's permits go to without a round trip: this instance's oldest waiter, when
   * it is the fleet's oldest (numbered below the head run's limit) and costs no more than the
   * holder. None while Redis decides alone: degraded, a holder Redis may not count, a shrink, or a
   * holder or waiter whose lease may end before Redis hears of the hand-over (a paused process), or a
   * lane policy.
   */
  heirOf(holder: T.FleetTicket, now: number): T.FleetTicket | undefined {
    if (holder.state !== T.HELD && holder.state !== T.GRANTED) return undefined
    // under a lane policy only Redis knows which lane is served next
    if (this.settings.lanes !== undefined) return undefined
    if (this.degraded || this.shrinking || holder.needsClaim) return undefined
    const stale = now - this.handOverFreshMillis
    if (holder.renewedAt < stale) return undefined
    const oldest = this.waiting.values().next().value
    if (oldest === undefined || oldest.cost > holder.cost || oldest.renewedAt < stale) return undefined
    return T.numberOf(oldest) < this.runLimit ? oldest : undefined
  }

  /** The heir's wait ends now; Redis hears of it in this turn's script. */
  handOver(holder: T.FleetTicket, heir: T.FleetTicket): Effect.Effect<void> {
    const askedAt = this.clock.unsafeCurrentTimeMillis()
    return Effect.async<ReadonlyArray<unknown>, Api.BulkheadStoreError>((resume) => {
      this.push({ operation: "hand over", code: S.HAND_OVER, id: holder.member, arg: heir.member, resume })
      heir.handedFrom = holder.member
      // told once the hand-over is queued: whatever the heir asks Redis next comes after it
      this.granted(heir, heir.member)
    }).pipe(Effect.flatMap((reply) => this.handedOver(heir, reply, askedAt)), Effect.ignore)
  }

  /**
   * Redis's answer to a hand-over: the heir holds its permits now, or it holds none (the holder's
   * lease had ended and the permits were not free, or a shrink) and has lost its lease. Called
   * when the answer comes: what it returns only logs. Its lease counts from `askedAt`, when the
   * hand-over was queued.
   */
  handedOver(heir: T.FleetTicket, reply: ReadonlyArray<unknown>, askedAt: number): Effect.Effect<void> {
    heir.handedFrom = ""
    heir.needsClaim = false
    if (heir.state === T.GONE || heir.lost) return Effect.void
    if (int(reply[0]) === 1) {
      heir.renewedAt = askedAt
      return Effect.void
    }
    return this.leaseLost(
      heir,
      `the permits a holder of this process handed it were not counted by Redis (K = ${int(reply[2])}, ` +
        `${int(reply[1])} in use: a shrink not heard of yet, or the holder's lease had ended and its permits ` +
        `were taken)`
    )
  }

  /** The ticket runs without a lease Redis counts (`leases.ts`). */
  abstract leaseLost(ticket: T.FleetTicket, why: string): Effect.Effect<void>
}
