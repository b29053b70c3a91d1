/**
 * Taking permits: a ticket in the global order, a wait for its grant, and the fallback when Redis
 * cannot answer; `run` and `acquire` on top, with the permits given back exactly once.
 *
 * @internal
 */
import { Bulkhead } from "@sluice/bulkhead"
import * as M from "@sluice/core/FleetMessages"
import * as S from "@sluice/core/FleetScripts"
import { acquireArg, int } from "@sluice/core/FleetTicket"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as Api from "../RedisBulkhead.js"
import type { Impl, Lane } from "./core.js"
import { decodeDuration } from "./settings.js"
import * as T from "./ticket.js"

type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** The ticket holds its fleet permits now, after a wait of `waitedMillis` (measured in its lane's series). */
const holding = (impl: Impl, ticket: T.FleetTicket, waitedMillis: number, lane: Lane | undefined): T.FleetTicket => {
  ticket.state = T.HELD
  ;(lane?.limits.series.permitWait ?? impl.series.permitWait).updateUnsafe(waitedMillis / 1000, impl.context)
  return ticket
}

/**
 * A grant read too late to start a call on (`Impl.fresh`): its permits go back (a release Redis
 * fences if the lease has ended) and the caller queues again at the tail.
 */
const tooLate = (impl: Impl, ticket: T.FleetTicket, now: number): Effect.Effect<void> =>
  Effect.andThen(
    impl.release(ticket),
    Effect.logWarning(
      M.tooLate(impl.settings.name, ticket.member, now - ticket.renewedAt, impl.settings.leaseTtlMillis)
    )
  )

/** Admits a new ticket on the local fallback, with what is left of the wait budget. */
const admitLocally = (
  impl: Impl,
  restore: Restore,
  cost: number,
  remainingMillis: number,
  start: number,
  lane: Lane | undefined
): Effect.Effect<T.FleetTicket, Bulkhead.BulkheadError> =>
  Effect.gen(function*() {
    const fallback = impl.fallback
    if (fallback === undefined) return yield* Effect.die(new Error(M.noFallback))
    const ticket = T.make(impl.mark, cost)
    impl.tickets.set(ticket.nonce, ticket)
    yield* fallback.admit(restore, ticket, remainingMillis).pipe(
      Effect.tapError(() => Effect.sync(() => impl.forget(ticket)))
    )
    const now = yield* Clock.currentTimeMillis
    ticket.renewedAt = now
    ;(lane?.limits.series.permitWait ?? impl.series.permitWait).updateUnsafe((now - start) / 1000, impl.context)
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
    // a lane's acquire tells the script its lane and the lane's bound
    const arg = acquireArg(cost, lane)
    const clock = yield* Effect.clockWith(Effect.succeed)
    const start = clock.currentTimeMillisUnsafe()
    const maxWaitMillis = Duration.toMillis(maxWait)
    const fallback = impl.fallback
    for (;;) {
      const asked = clock.currentTimeMillisUnsafe()
      // degraded with a fallback: straight to it; the beat notices when Redis answers again
      if (fallback !== undefined && impl.degraded) {
        return yield* admitLocally(impl, restore, cost, maxWaitMillis - (asked - start), start, lane)
      }
      const ticket = T.make(impl.mark, cost)
      impl.tickets.set(ticket.nonce, ticket)
      const code = maxWaitMillis === 0 ? S.TRY_ACQUIRE : S.ACQUIRE
      const answer = yield* Effect.result(impl.submit("acquire", code, ticket.nonce, arg))
      if (Result.isFailure(answer)) {
        impl.forget(ticket)
        if (fallback === undefined) return yield* Effect.fail(answer.failure)
        return yield* admitLocally(impl, restore, cost, maxWaitMillis - (asked - start), start, lane)
      }
      const reply = answer.success
      const kind = int(reply[0])
      const used = int(reply[2])
      const permits = int(reply[3])
      const ahead = int(reply[4])
      const now = clock.currentTimeMillisUnsafe()
      // its lease counts from before it asked: a reply read late (a paused process) makes it older, not fresher
      ticket.renewedAt = asked
      if (kind === S.ACQUIRE_GRANTED) {
        ticket.member = String(reply[1])
        if (impl.fresh(ticket, now)) return holding(impl, ticket, now - start, lane)
        yield* tooLate(impl, ticket, now)
        continue
      }
      if (kind === S.ACQUIRE_FULL) {
        impl.forget(ticket)
        ;(lane?.limits.series.full ?? impl.series.full).updateUnsafe(1, impl.context)
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
        if (impl.fresh(ticket, now)) return holding(impl, ticket, now - start, lane)
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
        const left = yield* Effect.result(impl.submit("leave", S.LEAVE_KEEPING, ticket.member, ""))
        if (Result.isFailure(left)) {
          // Redis did not hear it: the waiting lease (or a grant nobody was told of) ends within the TTL
          impl.forget(ticket)
          if (fallback === undefined) return yield* Effect.fail(left.failure)
          const last = impl.lastStats
          return yield* Effect.fail(impl.timeoutError(cost, maxWait, last.permits, last.inFlight, ahead, lane))
        }
        if (int(left.success[0]) === S.LEFT_HELD) {
          if (impl.fresh(ticket, clock.currentTimeMillisUnsafe())) return holding(impl, ticket, maxWaitMillis, lane)
          yield* impl.release(ticket)
        }
        impl.forget(ticket)
        return yield* Effect.fail(
          impl.timeoutError(cost, maxWait, int(left.success[2]), int(left.success[1]), ahead, lane)
        )
      }
      if (outcome.value) {
        // a grant message, a hand-over or a renewal: whichever, read in time or not at all
        const at = clock.currentTimeMillisUnsafe()
        if (impl.fresh(ticket, at)) return holding(impl, ticket, at - start, lane)
        yield* tooLate(impl, ticket, at)
        continue
      }
      yield* Effect.logWarning(M.outlived(settings.name, ticket.member, settings.leaseTtlMillis))
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
      const lost = Deferred.makeUnsafe<void>()
      ticket.lostSignal = lost
      // lost already (a hand-over Redis did not count, answered before this fiber ran): interrupted at once
      if (ticket.lost) Deferred.doneUnsafe(lost, Exit.void)
      return Effect.ensuring(
        restore(Effect.raceFirst(self, Effect.andThen(Deferred.await(lost), Effect.interrupt))),
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
