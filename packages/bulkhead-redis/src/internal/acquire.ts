/**
 * Taking permits: a ticket in the global order, a wait for its grant, and the fallback when Redis
 * cannot answer; `run` and `acquire` on top, with the permits given back exactly once.
 *
 * @internal
 */
import { Bulkhead } from "@sluice/bulkhead"
import * as S from "@sluice/core/FleetScripts"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Api from "../RedisBulkhead.js"
import type { Impl, Lane } from "./core.js"
import { decodeDuration } from "./settings.js"
import * as T from "./ticket.js"

type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

const int = (u: unknown): number => (typeof u === "number" ? u : Number(u))

/** The ticket holds its fleet permits now, after a wait of `waitedMillis` (measured under `labels`). */
const holding = (
  ticket: T.FleetTicket,
  waitedMillis: number,
  labels: ReadonlyArray<MetricLabel.MetricLabel>
): T.FleetTicket => {
  ticket.state = T.HELD
  Bulkhead.permitWaitSeconds.unsafeUpdate(waitedMillis / 1000, labels)
  return ticket
}

/**
 * A grant read too late to start a call on (`Impl.fresh`): its permits go back (a release Redis
 * fences if the lease has ended) and the caller queues again at the tail.
 */
const tooLate = (impl: Impl, ticket: T.FleetTicket, now: number): Effect.Effect<void> =>
  Effect.zipRight(
    impl.release(ticket),
    Effect.logWarning(
      `bulkhead "${impl.settings.name}": the grant of ticket ${ticket.member} was read ${now - ticket.renewedAt}ms ` +
        `after the script its lease counts from was sent, past two thirds of its TTL of ${impl.settings.leaseTtlMillis}ms ` +
        `(was this process paused?): its permits may be another's by now, so it starts no call and queues again at the tail`
    )
  )

/** Admits a new ticket on the local fallback, with what is left of the wait budget. */
const admitLocally = (
  impl: Impl,
  restore: Restore,
  cost: number,
  remainingMillis: number,
  start: number,
  labels: ReadonlyArray<MetricLabel.MetricLabel>
): Effect.Effect<T.FleetTicket, Bulkhead.BulkheadError> =>
  Effect.gen(function*() {
    const fallback = impl.fallback
    if (fallback === undefined) return yield* Effect.dieMessage("no fallback with storeDown fail-closed")
    const ticket = T.make(impl.mark, cost)
    impl.tickets.set(ticket.nonce, ticket)
    yield* fallback.admit(restore, ticket, remainingMillis).pipe(
      Effect.tapError(() => Effect.sync(() => impl.forget(ticket)))
    )
    const now = yield* Clock.currentTimeMillis
    ticket.renewedAt = now
    Bulkhead.permitWaitSeconds.unsafeUpdate((now - start) / 1000, labels)
    return ticket
  })

/**
 * Takes the permits, queueing in the global order when they are not free. Runs inside
 * `uninterruptibleMask`: only the wait is interruptible, and an interrupted or timed-out waiter
 * leaves the queue, or gives back a grant it was not told of yet. When Redis cannot answer, a
 * fallback policy admits the call locally; a waiter already queued in Redis keeps its place.
 */
const acquireMasked = (
  impl: Impl,
  restore: Restore,
  options: Bulkhead.RunOptions | undefined
): Effect.Effect<T.FleetTicket, Bulkhead.BulkheadError | Api.BulkheadStoreError> =>
  Effect.gen(function*() {
    const settings = impl.settings
    let cost: number
    let maxWait: Duration.Duration
    let lane: Lane | undefined
    try {
      cost = impl.costOf(options)
      lane = impl.laneFor(options)
      maxWait = decodeDuration(settings.name, "maxWait", options?.maxWait) ?? lane?.limits.maxWait ?? settings.maxWait
    } catch (defect) {
      return yield* Effect.die(defect)
    }
    const labels = lane?.limits.labels ?? impl.labels
    // a lane's acquire tells the script its lane and the lane's bound
    const arg = lane === undefined ? String(cost) : `${cost} ${lane.maxWaitingArg} ${lane.name}`
    const clock = yield* Effect.clock
    const start = clock.unsafeCurrentTimeMillis()
    const maxWaitMillis = Duration.toMillis(maxWait)
    const fallback = impl.fallback
    for (;;) {
      const asked = clock.unsafeCurrentTimeMillis()
      // degraded with a fallback: straight to it; the beat notices when Redis answers again
      if (fallback !== undefined && impl.degraded) {
        return yield* admitLocally(impl, restore, cost, maxWaitMillis - (asked - start), start, labels)
      }
      const ticket = T.make(impl.mark, cost)
      impl.tickets.set(ticket.nonce, ticket)
      const code = maxWaitMillis === 0 ? S.TRY_ACQUIRE : S.ACQUIRE
      const answer = yield* Effect.either(impl.submit("acquire", code, ticket.nonce, arg))
      if (Either.isLeft(answer)) {
        impl.forget(ticket)
        if (fallback === undefined) return yield* Effect.fail(answer.left)
        return yield* admitLocally(impl, restore, cost, maxWaitMillis - (asked - start), start, labels)
      }
      const reply = answer.right
      const kind = int(reply[0])
      const used = int(reply[2])
      const permits = int(reply[3])
      const ahead = int(reply[4])
      const now = clock.unsafeCurrentTimeMillis()
      // its lease counts from before it asked: a reply read late (a paused process) makes it older, not fresher
      ticket.renewedAt = asked
      if (kind === S.ACQUIRE_GRANTED) {
        ticket.member = String(reply[1])
        if (impl.fresh(ticket, now)) return holding(ticket, now - start, labels)
        yield* tooLate(impl, ticket, now)
        continue
      }
      if (kind === S.ACQUIRE_FULL) {
        impl.forget(ticket)
        Bulkhead.rejectedTotal.unsafeUpdate(1, lane?.limits.fullLabels ?? impl.fullLabels)
        // a lane's reply: `ahead` counts its lane, then every lane's, then whether the lane's own bound refused
        const laneFull = lane !== undefined && int(reply[6]) === 1
        return yield* Effect.fail(
          new Bulkhead.BulkheadFull({
            bulkhead: settings.name,
            ...(lane === undefined ? {} : { lane: lane.name, bound: laneFull ? "lane" : "bulkhead" }),
            requested: cost,
            cost,
            permits,
            inFlight: used,
            waiting: lane === undefined || laneFull ? ahead : int(reply[5]),
            maxWaiting: laneFull && lane !== undefined ? lane.limits.maxWaiting : settings.maxWaiting
          })
        )
      }
      if (kind === S.ACQUIRE_REFUSED) {
        impl.forget(ticket)
        return yield* Effect.fail(impl.timeoutError(cost, Duration.zero, permits, used, ahead, lane))
      }
      // queued (the reply made it a waiter: `Impl.queued`); its grant or hand-over may have come already
      if (ticket.state === T.GRANTED) {
        if (impl.fresh(ticket, now)) return holding(ticket, now - start, labels)
        yield* tooLate(impl, ticket, now)
        continue
      }
      const granted = T.woken(ticket)
      const remaining = maxWaitMillis - (now - start)
      const outcome = yield* restore(
        Duration.isFinite(maxWait)
          ? Effect.timeoutOption(granted, Duration.millis(Math.max(0, remaining)))
          : Effect.asSome(granted)
      ).pipe(Effect.onInterrupt(() => impl.release(ticket)))
      if (Option.isNone(outcome)) {
        // maxWait ran out: no hand-over to it from now on; a grant that came meanwhile (told, handed
        // over or not told yet) is kept rather than wasted
        impl.waiting.delete(ticket.nonce)
        const left = yield* Effect.either(impl.submit("leave", S.LEAVE_KEEPING, ticket.member, ""))
        if (Either.isLeft(left)) {
          // Redis did not hear it: the waiting lease (or a grant nobody was told of) ends within the TTL
          impl.forget(ticket)
          if (fallback === undefined) return yield* Effect.fail(left.left)
          const last = impl.lastStats
          return yield* Effect.fail(impl.timeoutError(cost, maxWait, last.permits, last.inFlight, ahead, lane))
        }
        if (int(left.right[0]) === S.LEFT_HELD) {
          if (impl.fresh(ticket, clock.unsafeCurrentTimeMillis())) return holding(ticket, maxWaitMillis, labels)
          yield* impl.release(ticket)
        }
        impl.forget(ticket)
        return yield* Effect.fail(
          impl.timeoutError(cost, maxWait, int(left.right[2]), int(left.right[1]), ahead, lane)
        )
      }
      if (outcome.value) {
        // a grant message, a hand-over or a renewal: whichever, read in time or not at all
        const at = clock.unsafeCurrentTimeMillis()
        if (impl.fresh(ticket, at)) return holding(ticket, at - start, labels)
        yield* tooLate(impl, ticket, at)
        continue
      }
      yield* Effect.logWarning(
        `bulkhead "${settings.name}": the waiting ticket ${ticket.member} outlived its lease ` +
          `(${settings.leaseTtlMillis}ms without renewal: was this process paused, or did Redis restart?); ` +
          `it queues again at the tail`
      )
    }
  })

/** @internal */
export const run = <A, E, R>(
  impl: Impl,
  self: Effect.Effect<A, E, R>,
  options: Bulkhead.RunOptions | undefined
): Effect.Effect<A, E | Bulkhead.BulkheadError | Api.BulkheadStoreError, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(acquireMasked(impl, restore, options), (ticket) => {
      if (impl.settings.onLeaseLost !== "interrupt") return Effect.ensuring(restore(self), impl.release(ticket))
      const lost = Deferred.unsafeMake<void>(FiberId.none)
      ticket.lostSignal = lost
      // lost already (a hand-over Redis did not count, answered before this fiber ran): interrupted at once
      if (ticket.lost) Deferred.unsafeDone(lost, Exit.void)
      return Effect.ensuring(
        restore(Effect.raceFirst(self, Effect.zipRight(Deferred.await(lost), Effect.interrupt))),
        impl.release(ticket)
      )
    })
  )

/** @internal */
export const acquire = (
  impl: Impl,
  options: Bulkhead.RunOptions | undefined
): Effect.Effect<void, Bulkhead.BulkheadError | Api.BulkheadStoreError, Scope.Scope> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(
      acquireMasked(impl, restore, options),
      (ticket) => Effect.addFinalizer(() => impl.release(ticket))
    )
  )
