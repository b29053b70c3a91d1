/**
 * A bulkhead instance's state and its Redis I/O: the scripts, the batch of one event-loop turn
 * (acquires, releases, hand-overs, and the acquires given up on), and the degraded mode while
 * Redis cannot answer. The queue's client side (`queue.ts`), the leases (`leases.ts`) and the
 * bulkhead itself (`core.ts`) build on it.
 *
 * @internal
 */
import type { Bulkhead } from "@sluice/bulkhead"
import * as M from "@sluice/core/FleetMessages"
import * as S from "@sluice/core/FleetScripts"
import * as Ticket from "@sluice/core/FleetTicket"
import * as Connection from "@sluice/redis/RedisConnection"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as MetricLabel from "effect/MetricLabel"
import * as Api from "../RedisBulkhead.js"
import { storeDegraded, storeErrorsTotal } from "./metrics.js"
import type { Settings } from "./settings.js"
import { Fallback } from "./storeDown.js"
import * as T from "./ticket.js"

/** @internal */
export const int = Ticket.int

/** @internal */
export const isArray = Ticket.isArray

/** An `abandon` has no caller: its reply, or its failure (the nonce is kept for the next batch), goes nowhere. */
const ignoreReply = (): void => {}

/** @internal */
export const loadScripts = (lanes = false) => {
  const texts = lanes ? S.laneScripts : S.scripts
  const named = (name: S.ScriptName) => Connection.script(lanes ? `lanes ${name}` : name, texts[name])
  return {
    batch: named("batch"),
    renew: named("renew"),
    claim: named("claim"),
    stats: named("stats"),
    resize: named("resize")
  }
}

/** @internal */
export type Scripts = ReturnType<typeof loadScripts>

const MAX_BATCH = Ticket.MAX_BATCH

/** An operation of the `batch` script waiting for the end of the event-loop turn. */
export interface Pending {
  readonly operation: string
  readonly code: S.OperationCode
  /** A new ticket's nonce, or a member: the one the operation is about. */
  readonly id: string
  /** An acquire's cost, a hand-over's heir (its member), or nothing. */
  readonly arg: string
  readonly resume: (effect: Effect.Effect<ReadonlyArray<unknown>, Api.BulkheadStoreError>) => void
}

/** @internal */
export abstract class Transport {
  readonly tickets = new Map<string, T.FleetTicket>()
  /** The tickets queued in Redis whose wait is on, by nonce, in ticket-number order. */
  readonly waiting = new Map<string, T.FleetTicket>()
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
  /** Whether a refusal of this process's lane policy met by the renewal beat was logged. */
  refusalLogged = false
  lastStats: Bulkhead.Stats

  constructor(
    readonly settings: Settings,
    readonly connection: Connection.Service,
    readonly scripts: Scripts,
    /** The layer's clock, for what a reply does outside any fiber. */
    readonly clock: Clock.Clock
  ) {
    const { channel, keys } = settings.lanes === undefined
      ? S.keysOf(settings.prefix, settings.name)
      : S.laneKeysOf(settings.prefix, settings.name)
    this.keys = keys
    this.channel = channel
    this.mark = T.newMark()
    this.grantChannel = `${channel}:${this.mark}`
    const nameLabel = MetricLabel.make("name", settings.name)
    this.labels = [nameLabel]
    this.fullLabels = [nameLabel, MetricLabel.make("reason", "full")]
    this.timeoutLabels = [nameLabel, MetricLabel.make("reason", "timeout")]
    this.renewEveryMillis = Ticket.renewEveryMillis(settings.leaseTtlMillis)
    this.handOverFreshMillis = Ticket.freshMillis(settings.leaseTtlMillis)
    this.leaseTtlArg = String(settings.leaseTtlMillis)
    this.maxWaitingArg = Ticket.maxWaitingArg(settings.maxWaiting)
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

  /** A script's arguments after its keys: the grant channels' name, this process's K, then `extra`. */
  args(extra: ReadonlyArray<string>): Array<string> {
    const lanes = this.settings.lanes
    // a lane policy travels third: the scripts compare it with the name's
    return lanes === undefined
      ? [...this.keys, this.channel, String(this.permits), ...extra]
      : [...this.keys, this.channel, String(this.permits), lanes.text, ...extra]
  }

  /** Whether a lane script refused this process's policy: the name holds another (`FleetScripts.POLICY_REFUSED`). */
  refusedPolicy(reply: unknown): string | undefined {
    if (this.settings.lanes === undefined || !isArray(reply) || reply[0] !== S.POLICY_REFUSED) return undefined
    return S.policyMismatch(this.settings.name, this.settings.lanes.text, String(reply[1]))
  }

  /** What one reply (or one operation's part of a batch's reply) answers its caller. */
  answer(operation: string, reply: unknown): Effect.Effect<ReadonlyArray<unknown>, Api.BulkheadStoreError> {
    const refused = this.refusedPolicy(reply)
    if (refused !== undefined) return Effect.die(new Cause.IllegalArgumentException(refused))
    return this.answerReply(operation, reply)
  }

  private answerReply(
    operation: string,
    reply: unknown
  ): Effect.Effect<ReadonlyArray<unknown>, Api.BulkheadStoreError> {
    return !isArray(reply)
      ? this.failed(operation, new Error(M.unexpectedReply(reply)))
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
   * A script of the renewal beat: a refusal of this process's lane policy (the name took another
   * while Redis had lost its state) is a failure, logged once, so that the beat goes on.
   */
  beatCall(
    operation: string,
    script: Connection.Script,
    extra: ReadonlyArray<string>
  ): Effect.Effect<ReadonlyArray<unknown>, Api.BulkheadStoreError | Cause.IllegalArgumentException> {
    return Effect.async((resume) => {
      this.connection.unsafeRunScript(script, this.keys.length, this.args(extra)).then(
        (reply) => {
          const refused = this.refusedPolicy(reply)
          if (refused === undefined) return resume(this.answerReply(operation, reply))
          const failure = Effect.fail(new Cause.IllegalArgumentException(refused))
          if (this.refusalLogged) return resume(failure)
          this.refusalLogged = true
          resume(Effect.zipRight(Effect.logError(`${refused}; the renewal beat goes on, refused`), failure))
        },
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
      const refused = this.refusedPolicy(reply)
      if (refused !== undefined) {
        // nothing changed in Redis: an acquire is a defect naming both policies, the rest had nothing there
        const defect = Effect.die(new Cause.IllegalArgumentException(refused))
        for (const op of batch) {
          const acquire = op.code === S.ACQUIRE || op.code === S.TRY_ACQUIRE
          op.resume(acquire ? defect : Effect.succeed([S.LEFT_NOTHING, 0, this.permits]))
        }
        resumed = batch.length
        return
      }
      if (!isArray(reply) || reply.length !== batch.length + 2 || !isArray(reply[0])) {
        return fail(new Error(M.unexpectedReply(reply)))
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
      cause: this.connection.explain(cause),
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
      return Effect.logWarning(M.wentDown(
        error.message,
        fallback === undefined
          ? undefined
          : { permits: fallback.permits, storeDown: this.settings.storeDown, fleetPermits: this.permits }
      ))
    })
  }

  get cameBack(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (!this.degraded) return Effect.void
      this.degraded = false
      storeDegraded.unsafeUpdate(0, this.labels)
      return Effect.logInfo(M.cameBack(this.settings.name))
    })
  }

  /** A ticket that an acquire's reply queued starts waiting (`queue.ts`). */
  abstract queued(op: Pending, reply: unknown, sentAt: number): void

  /** Whether the fleet holds more permits than K, from a batch's last reply (`queue.ts`). */
  abstract counted(op: Pending, reply: unknown, resizes: number): void

  /** A grant of one of this instance's tickets (`queue.ts`). */
  abstract grantedMember(member: string): void
}
