/** @internal */
import { Bulkhead } from "@sluice/bulkhead"
import type { RateLimiter } from "@sluice/rate-limiter"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Settlement, Usage } from "../ProviderOptions.js"
import { wrap } from "./callFailed.js"
import type { Progress, ProviderState } from "./providerState.js"

/**
 * One attempt, outermost first: the bulkhead's `run` around the limiter's take and the call. Each
 * wait is bounded by what is left of the total budget, and reports the total's `TotalTimeout`
 * only when the total ends first: when a wait's own budget ends at the same instant, its own
 * error stands (the innermost wins).
 *
 * @internal
 */
export const attempt = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  progress: Progress,
  clock: Clock.Clock
): Effect.Effect<A, unknown, R> => {
  const queuedAt = clock.currentTimeMillisUnsafe()
  progress.phase = "permit_wait"
  const { lane, permits } = progress.settings
  const recorder = provider.recorder
  recorder?.queued(queuedAt, progress.attempt)
  const holding = Effect.suspend(() => {
    const granted = clock.currentTimeMillisUnsafe()
    provider.permitWait.add(granted - queuedAt)
    provider.lanes?.add(progress.settings.lane, granted - queuedAt)
    // a permit freed by shutdown for a waiter shutdown is ending: Effect 4's FiberSet.clear interrupts
    // its fibers one after the other, so the waiter may be granted before its own interruption lands
    if (provider.graceElapsed) return Effect.interrupt
    // a permit granted as the total runs out (freed by a call that timed out at that instant) comes too late
    if (granted >= progress.deadline) return Effect.fail(provider.totalTimeout(progress, granted, "permit_wait"))
    const held = provider.limiter === undefined
      ? call(provider, self, progress, clock, undefined)
      : limited(provider, provider.limiter, self, progress, clock, granted)
    if (recorder === undefined) return held
    recorder.granted(granted, granted - queuedAt, permits)
    return Effect.ensuring(held, Effect.sync(() => recorder.released(clock.currentTimeMillisUnsafe(), permits)))
  })
  const left = progress.deadline - queuedAt
  // the permit wait bounded by what is left of the total, when that ends before the bulkhead's
  // own budget (the call's lane's, with lanes)
  if (left >= provider.permitWaitMillisIn(lane)) {
    return provider.bulkhead.run(holding, permits === 1 && lane === undefined ? undefined : { permits, lane })
  }
  return Effect.catchIf(
    provider.bulkhead.run(holding, { permits, lane, maxWait: Duration.millis(left) }),
    (error) => Bulkhead.isBulkheadError(error) && error._tag === "PermitWaitTimeout",
    () => Effect.fail(provider.totalTimeout(progress, clock.currentTimeMillisUnsafe(), "permit_wait"))
  )
}

/** The limiter's wait, capped by what is left of the total: a start the total could not wait for is refused at once. */
const limited = <A, E, R>(
  provider: ProviderState,
  limiter: RateLimiter.RateLimiter,
  self: Effect.Effect<A, E, R>,
  progress: Progress,
  clock: Clock.Clock,
  granted: number
): Effect.Effect<A, unknown, R> => {
  progress.phase = "limiter_wait"
  const left = progress.deadline - granted
  const cost = progress.settings.cost
  const takeOptions = left < provider.limiterMaxWaitMillis
    ? { cost, maxWait: Duration.millis(left) }
    : cost === 1
    ? undefined
    : { cost }
  const afterWait = (usage: ((exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>) | undefined) =>
    Effect.suspend(() => {
      const passed = clock.currentTimeMillisUnsafe()
      provider.limiterWait.add(passed - granted)
      provider.recorder?.passed(passed, passed - granted)
      if (passed >= progress.deadline) return Effect.fail(provider.totalTimeout(progress, passed, "limiter_wait"))
      return call(provider, self, progress, clock, usage)
    })
  const usage = progress.settings.usage
  if (usage === undefined) return Effect.andThen(limiter.take(takeOptions), afterWait(undefined))
  // reserved, then settled as `usage` reads the call's own exit, inside the permit; released when
  // the call never started. Taken with no interruption between the reservation and its owner.
  return Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(restore(limiter.reserve(takeOptions)), (reservation) => {
      let started = false
      const settleCall = (exit: Exit.Exit<unknown, unknown>) => {
        started = true
        return settle(provider, reservation, usage, exit, clock)
      }
      return Effect.onExit(
        restore(afterWait(settleCall)),
        () => started ? Effect.void : settle(provider, reservation, undefined, Exit.void, clock)
      )
    })
  )
}

/** Settles `reservation` as `usage` reads `exit`; without `usage` (the call never started), releases. */
const settle = (
  provider: ProviderState,
  reservation: RateLimiter.Reservation,
  usage: Usage | undefined,
  exit: Exit.Exit<unknown, unknown>,
  clock: Clock.Clock
): Effect.Effect<void> => {
  let settlement: Settlement = "release"
  if (usage !== undefined) {
    try {
      settlement = usage(exit)
    } catch (error) {
      return Effect.logWarning(
        `provider "${provider.name}": its usage function threw (${String(error)}); the estimate stands`
      )
    }
  }
  provider.settled(reservation, settlement, clock.currentTimeMillisUnsafe())
  const settling = settlement === "release"
    ? reservation.release
    : settlement === undefined
    ? Effect.void
    : reservation.settle(settlement)
  return Effect.catch(
    settling,
    (error) => Effect.logWarning(`provider "${provider.name}": could not settle its reservation: ${error.message}`)
  )
}

/**
 * The call, its time recorded however it ends, under a timeout only when a budget bounds it: the
 * attempt's, or what is left of the total (then `TotalTimeout`, unless the attempt's ends first or
 * at the same instant).
 */
const call = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  progress: Progress,
  clock: Clock.Clock,
  usage: ((exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>) | undefined
): Effect.Effect<A, unknown, R> => {
  const start = clock.currentTimeMillisUnsafe()
  // only a limiter's rate is compared with the starts
  if (provider.limiterRate !== undefined) provider.starts.add(start)
  provider.dimensions?.started(start, progress.settings.cost)
  provider.recorder?.started(start, progress.settings.cost)
  progress.phase = "call"
  const own = usage === undefined ? self : Effect.onExit(self, usage)
  const timed = Effect.ensuring(
    Effect.mapError(own, wrap),
    Effect.sync(() => {
      const took = clock.currentTimeMillisUnsafe() - start
      provider.callTime.add(took)
      provider.recorder?.called(took + start, took)
      provider.series.call.updateUnsafe(took / 1000, provider.series.context)
    })
  )
  // an infinite attempt budget (a stream's, say) is no budget
  const budget = progress.settings.attemptTimeoutMillis ?? Infinity
  const left = progress.deadline - start
  if (budget === Infinity && left === Infinity) return timed
  return Effect.timeoutOrElse(timed, {
    duration: Duration.millis(Math.min(budget, left)),
    orElse: () =>
      Effect.fail(
        budget <= left
          ? provider.callTimeout(progress)
          : provider.totalTimeout(progress, clock.currentTimeMillisUnsafe(), "call")
      )
  })
}
