/** @internal */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as ProviderError from "../ProviderError.js"
import type { Call, ProviderState } from "./state.js"

/**
 * The budgets of one call, watched from outside its attempts: one timer fiber per call (not one
 * per attempt, as `Effect.timeoutFail` would fork with its own race). It sleeps until the nearest
 * deadline it knows: the total's, the current call's attempt budget, or, before an attempt reaches
 * its call, the earliest that budget could end. On waking it ends what is due: the attempt with
 * `CallTimeout`, or the call with `TotalTimeout`. When the attempt's own budget (its call, or its
 * permit wait) ends at the instant the total does, the innermost wins.
 *
 * @internal
 */
export const watchdog = (provider: ProviderState, call: Call, clock: Clock.Clock): Effect.Effect<void> => {
  const attemptBudget = call.perCall.attemptTimeoutMillis
  const watch: Effect.Effect<void> = Effect.suspend(() => {
    if (call.done) return Effect.void
    const now = clock.unsafeCurrentTimeMillis()
    const inCall = call.phase === "call"
    if (inCall && call.phaseDeadline <= now) {
      // the attempt's own budget: the attempt ends, the call goes on to its retry decision
      // the next attempt's budget ends a whole budget from now at the earliest
      const next = attemptBudget === undefined ? Infinity : now + attemptBudget
      return Effect.zipRight(
        endAttempt(call, attemptTimeout(provider, call)),
        call.deadline <= now ? Effect.void : sleepUntil(Math.min(call.deadline, next), now)
      )
    }
    if (call.deadline <= now) {
      // a permit wait whose own budget ends now reports itself
      if (call.phase === "permit_wait" && call.phaseDeadline <= now) return Effect.void
      call.ending = Exit.fail(provider.totalTimeout(call, now, call.phase))
      return interruptAttempt(call)
    }
    const nextAttemptDeadline = inCall
      ? call.phaseDeadline
      : attemptBudget === undefined || attemptBudget === Infinity
      ? Infinity
      : now + attemptBudget
    return sleepUntil(Math.min(call.deadline, nextAttemptDeadline), now)
  })
  const sleepUntil = (at: number, now: number): Effect.Effect<void> =>
    at === Infinity ? Effect.void : Effect.zipRight(clock.sleep(Duration.millis(at - now)), watch)
  // interruptible even for a caller that is not: the timer goes as soon as the call has ended
  return Effect.interruptible(watch)
}

const attemptTimeout = (provider: ProviderState, call: Call): ProviderError.CallTimeout =>
  new ProviderError.CallTimeout({
    provider: provider.name,
    timeout: Duration.millis(call.perCall.attemptTimeoutMillis ?? Infinity),
    attempt: call.attempt,
    maxAttempts: call.perCall.maxAttempts
  })

/** Ends the current attempt with `error`: its fiber is interrupted, its caller sees `error`. */
const endAttempt = (call: Call, error: unknown): Effect.Effect<void> => {
  if (call.attemptEnding !== undefined) return Effect.void
  call.attemptEnding = Exit.fail(error)
  return interruptAttempt(call)
}

/** @internal */
export const interruptAttempt = (call: Call): Effect.Effect<void> =>
  call.fiber === undefined ? Effect.void : Fiber.interruptFork(call.fiber)
