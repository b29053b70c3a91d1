/** @internal */
import type * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as ProviderError from "../ProviderError.js"
import type { Call, ProviderState } from "./state.js"
import { TimerHeap } from "./timerHeap.js"

/**
 * The budgets of a provider's calls, watched from outside their attempts by one timer fiber for
 * the whole provider: not one per attempt, as `Effect.timeoutFail` forks with its own race, nor
 * one per call. Each watched call waits in a heap by the nearest instant a budget of it could end:
 * the total's, the current call's attempt budget, or, before an attempt reaches its call, the
 * earliest that budget could end. The fiber sleeps until the earliest instant of all, then ends
 * what is due: an attempt with `CallTimeout`, a call with `TotalTimeout`. When the attempt's own
 * budget (its call, or its permit wait) ends at the instant the total does, the innermost wins.
 *
 * @internal
 */
export class Watchdog {
  private readonly heap = new TimerHeap<Call>()
  /** The instant the fiber sleeps until (`Infinity`: until woken); `-Infinity` while it is awake. */
  private sleepingUntil = -Infinity
  /** Completed to wake the fiber early, for an instant before the one it sleeps until. */
  private wake = Deferred.unsafeMake<void>(FiberId.none)

  constructor(private readonly provider: ProviderState) {}

  /** Starts watching a call that has just begun at `now`. */
  watch(call: Call, now: number): void {
    const attemptBudget = call.perCall.attemptTimeoutMillis
    this.schedule(call, Math.min(call.deadline, attemptBudget === undefined ? Infinity : now + attemptBudget))
  }

  /** Stops watching a call that has ended. */
  unwatch(call: Call): void {
    this.heap.remove(call)
  }

  /** The timer fiber's work, forever: the provider's scope forks it and interrupts it last. */
  readonly run = (clock: Clock.Clock): Effect.Effect<never> => {
    const turn: Effect.Effect<void> = Effect.suspend(() => {
      const now = clock.unsafeCurrentTimeMillis()
      const endings: Array<Effect.Effect<void>> = []
      for (let call = this.heap.popDue(now); call !== undefined; call = this.heap.popDue(now)) {
        endings.push(this.step(call, now))
      }
      const next = this.heap.peek()?.at ?? Infinity
      this.wake = Deferred.unsafeMake<void>(FiberId.none)
      this.sleepingUntil = next
      const woken = Deferred.await(this.wake)
      const sleep = next === Infinity ? woken : Effect.race(clock.sleep(Duration.millis(next - now)), woken)
      return Effect.zipRight(
        Effect.forEach(endings, (ending) => ending, { discard: true }),
        Effect.zipRight(sleep, Effect.sync(() => this.sleepingUntil = -Infinity))
      )
    })
    return Effect.forever(turn)
  }

  private schedule(call: Call, at: number): void {
    if (at === Infinity) return
    this.heap.set(call, at)
    if (at < this.sleepingUntil) {
      this.sleepingUntil = -Infinity
      Deferred.unsafeDone(this.wake, Exit.void)
    }
  }

  /** A call whose instant has come: end what is due, and watch it again until its next instant. */
  private step(call: Call, now: number): Effect.Effect<void> {
    if (call.done) return Effect.void
    const attemptBudget = call.perCall.attemptTimeoutMillis
    const inCall = call.phase === "call"
    if (inCall && call.phaseDeadline <= now) {
      // the attempt's own budget: the attempt ends, the call goes on to its retry decision
      // the next attempt's budget ends a whole budget from now at the earliest
      const next = attemptBudget === undefined ? Infinity : now + attemptBudget
      if (call.deadline > now) this.schedule(call, Math.min(call.deadline, next))
      return endAttempt(call, attemptTimeout(this.provider, call))
    }
    if (call.deadline <= now) {
      // a permit wait whose own budget ends now reports itself
      if (call.phase === "permit_wait" && call.phaseDeadline <= now) return Effect.void
      call.ending = Exit.fail(this.provider.totalTimeout(call, now, call.phase))
      return interruptAttempt(call)
    }
    const nextAttemptDeadline = inCall
      ? call.phaseDeadline
      : attemptBudget === undefined || attemptBudget === Infinity
      ? Infinity
      : now + attemptBudget
    this.schedule(call, Math.min(call.deadline, nextAttemptDeadline))
    return Effect.void
  }
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
