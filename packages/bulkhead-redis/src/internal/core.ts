/**
 * One distributed bulkhead in this process: its tickets, the scripts that move them, the renewal
 * beat, and the store-down policy when Redis cannot answer.
 *
 * @internal
 */
import { Bulkhead } from "@sluice/bulkhead"
import * as Connection from "@sluice/redis/RedisConnection"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as MetricLabel from "effect/MetricLabel"
import * as Api from "../RedisBulkhead.js"
import { leaseLostTotal, storeDegraded, storeErrorsTotal } from "./metrics.js"
import * as S from "./scripts.js"
import { illegal, isPositiveInteger, type Settings } from "./settings.js"
import { Fallback, releaseLocal } from "./storeDown.js"
import * as T from "./ticket.js"

const int = (u: unknown): number => (typeof u === "number" ? u : Number(u))

const isArray = (u: unknown): u is ReadonlyArray<unknown> => Array.isArray(u)

/** An `abandon` has no caller: its reply, or its failure (the nonce is kept for the next batch), goes nowhere. */
const ignoreReply = (): void => {}

/** While acquires given up on wait to be ended, the beat tries every this often: the fleet's K is back within it. */
const ABANDON_RETRY_MILLIS = 200

/** @internal */
export const loadScripts = () => ({
  batch: Connection.script("batch", S.scripts.batch),
  renew: Connection.script("renew", S.scripts.renew),
  claim: Connection.script("claim", S.scripts.claim),
  stats: Connection.script("stats", S.scripts.stats),
  resize: Connection.script("resize", S.scripts.resize)
})

type Scripts = ReturnType<typeof loadScripts>

/**
 * The most operations one `batch` script carries. A turn that asks for more sends several, back to
 * back: Redis runs one while the reply of the one before is read, and no script holds Redis long.
 */
const MAX_BATCH = 32

/** An operation of the `batch` script waiting for the end of the event-loop turn. */
interface Pending {
  readonly operation: string
  readonly code: S.OperationCode
  /** A new ticket's nonce, or a member: the one the operation is about. */
  readonly id: string
  /** An acquire's cost, a hand-over's heir (its member), or nothing. */
  readonly arg: string
  readonly resume: (effect: Effect.Effect<ReadonlyArray<unknown>, Api.BulkheadStoreError>) => void
}

/** @internal */
export class Impl {
  readonly tickets = new Map<string, T.Ticket>()
  /** The tickets queued in Redis whose wait is on, by nonce, in ticket-number order. */
  readonly waiting = new Map<string, T.Ticket>()
  /**
   * Every ticket still waiting that is numbered below this is this instance's (the head run's limit,
   * from the last reply, or raised by a grant message): its oldest waiter below it is the fleet's.
   */
  runLimit = 0
  /** The greatest ticket number in `waiting` when it was last in order: a lower one sorts it again. */
  lastWaiting = 0
  /** The last reply counted more permits in use than K (a shrink): releases go to Redis then. */
  shrinking = false
  /** This instance's resizes: a reply to a script sent before the last one cannot end `shrinking`. */
  resizes = 0
  /**
   * How long after its last renewal a ticket still takes part in a hand-over: two thirds of the
   * TTL, so that its lease (renewed every third) outlives the script that carries the hand-over.
   */
  readonly handOverFreshMillis: number
  readonly keys: ReadonlyArray<string>
  /** The grant channels' common name, sent to every script. */
  readonly channel: string
  /** This instance's nonce prefix, and the channel of its grants. */
  readonly mark: string
  readonly grantChannel: string
  readonly labels: ReadonlyArray<MetricLabel.MetricLabel>
  readonly fullLabels: ReadonlyArray<MetricLabel.MetricLabel>
  readonly timeoutLabels: ReadonlyArray<MetricLabel.MetricLabel>
  readonly renewEveryMillis: number
  /** The script arguments every batch sends unchanged. */
  readonly leaseTtlArg: string
  readonly maxWaitingArg: string
  /** The local bulkhead of `fail-open` and `local`; none with `fail-closed`. */
  readonly fallback: Fallback | undefined
  permits: number
  /** The acquires and releases asked for in this event-loop turn, sent together when it ends. */
  pending: Array<Pending> = []
  /**
   * The nonces of acquires whose script failed on this side (a command timeout while Redis was
   * paused or slow): it may still run and grant or queue a ticket nobody waits for. The next batch
   * that reaches Redis ends them (`a`), rather than leaving their permits taken for a lease TTL.
   */
  readonly abandoned = new Set<string>()
  degraded = false
  /** A `resize` Redis did not hear (a fallback policy answered it): sent again at the next beat. */
  resizePending = false
  /** Whether the fallback holders Redis could not count yet were logged since the last recovery. */
  unclaimedLogged = false
  lastStats: Bulkhead.Stats

  constructor(
    readonly settings: Settings,
    readonly connection: Connection.Service,
    readonly scripts: Scripts,
    /** The layer's clock, for what a reply does outside any fiber. */
    readonly clock: Clock.Clock
  ) {
    const { channel, keys } = S.keysOf(settings.prefix, settings.name)
    this.keys = keys
    this.channel = channel
    this.mark = T.newMark()
    this.grantChannel = `${channel}:${this.mark}`
    const nameLabel = MetricLabel.make("name", settings.name)
    this.labels = [nameLabel]
    this.fullLabels = [nameLabel, MetricLabel.make("reason", "full")]
    this.timeoutLabels = [nameLabel, MetricLabel.make("reason", "timeout")]
    this.renewEveryMillis = Math.floor(settings.leaseTtlMillis / 3)
    this.handOverFreshMillis = Math.floor(settings.leaseTtlMillis * 2 / 3)
    this.leaseTtlArg = String(settings.leaseTtlMillis)
    this.maxWaitingArg = settings.maxWaiting === Infinity ? "-1" : String(settings.maxWaiting)
    this.permits = settings.permits
    this.fallback = settings.storeDown === "fail-closed" ? undefined : new Fallback(settings, settings.permits)
    this.lastStats = {
      name: settings.name,
      permits: settings.permits,
      maxPermits: settings.maxPermits,
      inFlight: 0,
      holders: 0,
      waiting: 0,
      waitingPermits: 0,
      maxWaiting: settings.maxWaiting
    }
  }

  // --- Redis and the degraded mode -----------------------------------------------------------

  /** A script's arguments after its keys: the grant channels' name, this process's K, then `extra`. */
  args(extra: ReadonlyArray<string>): Array<string> {
    return [...this.keys, this.channel, String(this.permits), ...extra]
  }

  /** What one reply (or one operation's part of a batch's reply) answers its caller. */
  answer(operation: string, reply: unknown): Effect.Effect<ReadonlyArray<unknown>, Api.BulkheadStoreError> {
    return !isArray(reply)
      ? this.failed(operation, new Error(`unexpected reply ${JSON.stringify(reply)}`))
      : this.degraded
      ? Effect.as(this.cameBack, reply)
      : Effect.succeed(reply)
  }

  /** Runs one script; a failure is a `BulkheadStoreError` and puts the bulkhead in degraded mode. */
  call(
    operation: string,
    script: Connection.Script,
    extra: ReadonlyArray<string>
  ): Effect.Effect<ReadonlyArray<unknown>, Api.BulkheadStoreError> {
    // one asynchronous step per script; acquires and releases go by `submit`, in batches
    return Effect.async((resume) => {
      this.connection.unsafeRunScript(script, this.keys.length, this.args(extra)).then(
        (reply) => resume(this.answer(operation, reply)),
        (cause) => resume(this.failed(operation, cause))
      )
    })
  }

  /**
   * Queues an acquire or a release for the batch of this event-loop turn: every fiber that the turn
   * runs asks first (the replies a socket read resumes included), then, in the turn's check phase,
   * one `batch` script carries them all, in the order asked.
   */
  submit(
    operation: string,
    code: S.OperationCode,
    id: string,
    arg: string
  ): Effect.Effect<ReadonlyArray<unknown>, Api.BulkheadStoreError> {
    return Effect.async((resume) => this.push({ operation, code, id, arg, resume }))
  }

  push(op: Pending): void {
    if (this.pending.push(op) === 1) setImmediate(this.flush)
  }

  readonly flush = (): void => {
    const all = this.pending
    this.pending = []
    // the acquires given up on go first, in the first script: they end before anything is granted
    const first: Array<Pending> = []
    for (const nonce of this.abandoned) {
      first.push({ operation: "abandon", code: S.ABANDON, id: nonce, arg: "", resume: ignoreReply })
    }
    this.abandoned.clear()
    const take = Math.max(0, MAX_BATCH - first.length)
    first.push(...all.slice(0, take))
    if (first.length > 0) this.send(first)
    for (let from = take; from < all.length; from += MAX_BATCH) this.send(all.slice(from, from + MAX_BATCH))
  }

  send(batch: ReadonlyArray<Pending>): void {
    const resizes = this.resizes
    const sentAt = this.clock.unsafeCurrentTimeMillis()
    const args = this.args([this.mark, this.leaseTtlArg, this.maxWaitingArg])
    for (const op of batch) args.push(op.code, op.id, op.arg)
    // every operation is resumed exactly once, whatever happens to the script or its reply
    let resumed = 0
    const fail = (cause: unknown) => {
      for (const op of batch.slice(resumed)) {
        // the script may run all the same (a timeout): what an acquire got there is ended by the next batch
        if (op.code === S.ACQUIRE || op.code === S.TRY_ACQUIRE || op.code === S.ABANDON) this.abandoned.add(op.id)
        op.resume(this.failed(op.operation, cause))
      }
      resumed = batch.length
    }
    const answered = (reply: unknown) => {
      if (!isArray(reply) || reply.length !== batch.length + 2 || !isArray(reply[0])) {
        return fail(new Error(`unexpected reply ${JSON.stringify(reply)}`))
      }
      // the grants first: a ticket this batch queued may be granted by a release behind it
      for (const member of reply[0]) this.grantedMember(String(member))
      // then the tickets it queued, in ticket-number order, before any of their callers runs
      batch.forEach((op, i) => this.queued(op, reply[i + 2], sentAt))
      this.runLimit = int(reply[1])
      this.counted(batch[batch.length - 1], reply[batch.length + 1], resizes)
      for (; resumed < batch.length; resumed++) {
        batch[resumed].resume(this.answer(batch[resumed].operation, reply[resumed + 2]))
      }
    }
    // a throw while sending or while answering fails the operations not answered yet
    new Promise((sent) => sent(this.connection.unsafeRunScript(this.scripts.batch, this.keys.length, args)))
      .then(answered)
      .catch(fail)
  }

  failed(operation: string, cause: unknown): Effect.Effect<never, Api.BulkheadStoreError> {
    const storeError = new Api.BulkheadStoreError({
      bulkhead: this.settings.name,
      operation,
      cause,
      policy: this.settings.storeDown
    })
    return Effect.zipRight(this.wentDown(storeError), Effect.fail(storeError))
  }

  wentDown(error: Api.BulkheadStoreError): Effect.Effect<void> {
    return Effect.suspend(() => {
      storeErrorsTotal.unsafeUpdate(1, this.labels)
      // whatever Redis holds now may be gone when it answers again: each holder asks to be counted
      for (const ticket of this.tickets.values()) {
        if (ticket.state === T.HELD || ticket.state === T.GRANTED) ticket.needsClaim = true
      }
      if (this.degraded) return Effect.void
      this.degraded = true
      this.unclaimedLogged = false
      storeDegraded.unsafeUpdate(1, this.labels)
      const fallback = this.fallback
      return Effect.logWarning(
        fallback === undefined
          ? error.message
          : `${error.message}: calls run on a local bulkhead of ${fallback.permits} permit${
            fallback.permits === 1 ? "" : "s"
          } ` +
            `(storeDown "${this.settings.storeDown}", of K = ${this.permits}) until Redis answers again`
      )
    })
  }

  get cameBack(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (!this.degraded) return Effect.void
      this.degraded = false
      storeDegraded.unsafeUpdate(0, this.labels)
      return Effect.logInfo(`bulkhead "${this.settings.name}": Redis answers again, permits are shared again`)
    })
  }

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

  // --- grants and leases --------------------------------------------------------------------

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

  granted(ticket: T.Ticket, member: string): void {
    if (ticket.state !== T.ASKING && ticket.state !== T.QUEUED) return
    ticket.member = member
    ticket.state = T.GRANTED
    this.waiting.delete(ticket.nonce)
    T.settle(ticket, true)
  }

  /**
   * One beat of the renewal loop: a `resize` Redis missed, the leases of every ticket of this
   * process in one script (which also expires what is due and grants: the safety net for a lost
   * grant message), and the claims of holders Redis may not count. While degraded with nothing to
   * renew, a `stats` read notices that Redis is back. Answers how long to sleep.
   */
  get beat(): Effect.Effect<number> {
    return Effect.suspend(() => {
      const renewing: Array<T.Ticket> = []
      const claiming: Array<T.Ticket> = []
      const handing: Array<T.Ticket> = []
      for (const ticket of this.tickets.values()) {
        if (ticket.state === T.GONE || ticket.lost || ticket.member === "") continue
        // a hand-over Redis may not have heard is sent again rather than claimed: it frees the holder's lease
        if (ticket.needsClaim) (ticket.handedFrom === "" ? claiming : handing).push(ticket)
        else renewing.push(ticket)
      }
      const steps: Array<Effect.Effect<number>> = []
      if (this.resizePending) {
        steps.push(Effect.as(
          Effect.ignore(Effect.tap(this.call("resize", this.scripts.resize, []), () => (this.resizePending = false))),
          this.renewEveryMillis
        ))
      }
      if (renewing.length > 0) steps.push(this.renew(renewing))
      if (claiming.length > 0) steps.push(this.claim(claiming))
      for (const heir of handing) {
        const askedAt = this.clock.unsafeCurrentTimeMillis()
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
        steps.push(Effect.succeed(ABANDON_RETRY_MILLIS))
      } else if (steps.length === 0 && this.degraded) {
        steps.push(Effect.as(Effect.ignore(this.stats), this.renewEveryMillis))
      }
      return Effect.map(
        Effect.all(steps),
        (delays) => delays.reduce((a, b) => Math.min(a, b), this.renewEveryMillis)
      )
    })
  }

  renew(live: ReadonlyArray<T.Ticket>): Effect.Effect<number> {
    return Effect.gen(this, function*() {
      const asked = yield* Clock.currentTimeMillis
      const reply = yield* this.call("renew", this.scripts.renew, live.map((t) => t.member))
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
          T.settle(ticket, false)
        } else if (ticket.state !== T.GONE) {
          effects.push(this.leaseLost(ticket, this.renewedLate(ticket, now)))
        }
      })
      yield* Effect.all(effects, { discard: true })
      const next = int(reply[0])
      return waiters && next >= 0 ? Math.min(this.renewEveryMillis, next + 10) : this.renewEveryMillis
    }).pipe(Effect.orElseSucceed(() => this.renewEveryMillis))
  }

  /**
   * Asks Redis to count the holders it may not count: a lease still there is renewed; a missing one
   * is claimed if its permits are free. A fleet holder whose lease is gone and not free has lost it
   * (the lease-lost rule); a fallback holder runs on uncounted and asks again at the next beat.
   */
  claim(holders: ReadonlyArray<T.Ticket>): Effect.Effect<number> {
    return Effect.gen(this, function*() {
      const asked = yield* Clock.currentTimeMillis
      const reply = yield* this.call("claim", this.scripts.claim, holders.map((t) => t.member))
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
        effects.push(Effect.logWarning(
          `bulkhead "${this.settings.name}": calls admitted by the local fallback while Redis was down hold ` +
            `${unclaimed} permit${unclaimed === 1 ? "" : "s"} Redis cannot count yet (the fleet's permits are ` +
            `taken); they are counted as soon as permits free up, and until then the fleet may exceed K = ${this.permits}`
        ))
      }
      yield* Effect.all(effects, { discard: true })
      return this.renewEveryMillis
    }).pipe(Effect.orElseSucceed(() => this.renewEveryMillis))
  }

  /** How late the last renewal of a lease found gone was: the usual reason for a lost lease. */
  renewedLate(ticket: T.Ticket, now: number): string {
    const age = now - ticket.renewedAt
    const ttl = this.settings.leaseTtlMillis
    return age > ttl
      ? `renewed last ${age}ms ago, past its TTL of ${ttl}ms`
      : `renewed last ${age}ms ago, within its TTL of ${ttl}ms: Redis lost it (a restart, a flush or a failover)`
  }

  /**
   * Whether a grant may start a call: its lease, counted from when the script that set it was sent
   * (`renewedAt`), has a third of its TTL left by this process's clock, so the next beat renews it
   * in time. A grant read later (the process was paused) may be another's permits by now.
   */
  fresh(ticket: T.Ticket, now: number): boolean {
    return now - ticket.renewedAt <= this.handOverFreshMillis
  }

  /** The ticket runs without a lease Redis counts: `why` says how that came about. */
  leaseLost(ticket: T.Ticket, why: string): Effect.Effect<void> {
    ticket.lost = true
    leaseLostTotal.unsafeUpdate(1, this.labels)
    if (ticket.lostSignal !== undefined) Deferred.unsafeDone(ticket.lostSignal, Exit.void)
    return Effect.logWarning(
      `bulkhead "${this.settings.name}": the lease of ticket ${ticket.member} (${ticket.cost} permit${
        ticket.cost === 1 ? "" : "s"
      }) was lost: ${why}; ` +
        `its permits may be held by another call, so the fleet may exceed ${this.permits} permits until this call ends` +
        (this.settings.onLeaseLost === "interrupt" && ticket.lostSignal !== undefined ? " (interrupting it)" : "")
    )
  }

  // --- acquire and release ------------------------------------------------------------------

  costOf(options: Bulkhead.RunOptions | undefined): number {
    const cost = options?.cost ?? 1
    if (!isPositiveInteger(cost) || cost > this.settings.maxPermits) {
      throw illegal(
        `bulkhead "${this.settings.name}": cost must be an integer from 1 to maxPermits (${this.settings.maxPermits}), got ${cost}`
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
      cost,
      permits,
      inFlight,
      aheadWhenQueued: ahead
    })
  }

  forget(ticket: T.Ticket): void {
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
  release(ticket: T.Ticket): Effect.Effect<void> {
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
   * holder or waiter whose lease may end before Redis hears of the hand-over (a paused process).
   */
  heirOf(holder: T.Ticket, now: number): T.Ticket | undefined {
    if (holder.state !== T.HELD && holder.state !== T.GRANTED) return undefined
    if (this.degraded || this.shrinking || holder.needsClaim) return undefined
    const stale = now - this.handOverFreshMillis
    if (holder.renewedAt < stale) return undefined
    const oldest = this.waiting.values().next().value
    if (oldest === undefined || oldest.cost > holder.cost || oldest.renewedAt < stale) return undefined
    return T.numberOf(oldest) < this.runLimit ? oldest : undefined
  }

  /** The heir's wait ends now; Redis hears of it in this turn's script. */
  handOver(holder: T.Ticket, heir: T.Ticket): Effect.Effect<void> {
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
  handedOver(heir: T.Ticket, reply: ReadonlyArray<unknown>, askedAt: number): Effect.Effect<void> {
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
