/** @internal */
import { RateLimiter } from "@sluice/rate-limiter"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Predicate from "effect/Predicate"
import * as Random from "effect/Random"
import * as ProviderError from "../ProviderError.js"
import type { Settlement, Usage } from "../ProviderOptions.js"
import { CallFailed, unwrap, wrap } from "./callFailed.js"
import { callSeconds } from "./metrics.js"
import type { Call, ProviderState } from "./state.js"

type Restore = <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>

/**
 * The attempts of one call, run by its caller (uninterruptible but for the waits, `restore`d):
 * before each, the retry budget (for a retry) and the circuit breaker; then, in a child fiber the
 * provider can end from outside, bulkhead → rate limiter → the call → release; between attempts a
 * backoff that holds nothing, in a child fiber too.
 *
 * @internal
 */
export const attempts = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  call: Call,
  clock: Clock.Clock,
  restore: Restore
): Effect.Effect<A, unknown, R> => {
  const breaker = provider.breaker
  const attempt = (n: number, lastError: unknown): Effect.Effect<A, unknown, R> => {
    // ended from outside between two attempts
    if (call.ending !== undefined) return call.ending
    const now = clock.unsafeCurrentTimeMillis()
    const budget = provider.budget
    if (n > 1) {
      // the attempt and the total ended at the same instant: the attempt's error stands
      if (now >= call.deadline) return Effect.fail(lastError)
      if (budget !== undefined) {
        const window = budget.check(now)
        if (window.retries >= window.allowed) {
          return Effect.fail(
            new ProviderError.RetryBudgetExhausted({
              provider: provider.name,
              attempt: n,
              retries: window.retries,
              firstAttempts: window.firsts,
              allowed: window.allowed,
              window: Duration.millis(budget.settings.windowMillis),
              lastError: unwrap(lastError)
            })
          )
        }
      }
    }
    call.phase = "circuit"
    const admission = breaker?.admit(now)
    if (admission !== undefined && admission._tag === "Refuse") {
      return Effect.fail(
        new ProviderError.CircuitOpen({
          provider: provider.name,
          state: admission.state,
          failures: admission.failures,
          openedFor: Duration.millis(admission.openedForMillis),
          retryAfter: Duration.millis(admission.retryAfterMillis)
        })
      )
    }
    const probe = admission !== undefined && admission.probe
    if (n === 1) budget?.recordFirst(now)
    else budget?.recordRetry(now)
    call.attempt = n
    provider.attempts++
    // the breaker learns from every ending of the attempt, an interruption included (the caller's,
    // the total budget's, shutdown's), so that a probe never stays in flight for good
    const neutral = () => breaker?.onNeutral(probe)
    return Effect.flatMap(guarded(attemptOnce(provider, self, call, clock), call, restore, neutral), (exit) => {
      if (breaker !== undefined) {
        const verdict = call.ending === undefined ? judge(provider, exit) : "neutral"
        if (verdict === "success") breaker.onSuccess(probe)
        else if (verdict === "failure") breaker.onFailure(probe, clock.unsafeCurrentTimeMillis())
        else breaker.onNeutral(probe)
      }
      return Exit.isSuccess(exit) || call.ending !== undefined ? exit : retry(n, exit.cause)
    })
  }

  /** After a failed attempt: the next one after its backoff, or the failure as it is. */
  const retry = (n: number, cause: Cause.Cause<unknown>): Effect.Effect<A, unknown, R> => {
    const failure = Cause.failureOrCause(cause)
    if (Either.isRight(failure)) return Effect.failCause(cause)
    const error = failure.left
    if (error instanceof CallFailed && provider.resolved.isUpstream(error.error)) provider.upstreamErrors++
    if (RateLimiter.isRateLimiterError(error) && error._tag === "RateLimiterStoreError") provider.storeErrors++
    if (n >= call.perCall.maxAttempts || !isRetried(provider, error)) return Effect.fail(error)
    const now = clock.unsafeCurrentTimeMillis()
    if (now >= call.deadline) return Effect.fail(error)
    const { factor, initialMillis, jitter, maxMillis } = provider.resolved.backoff
    const exact = Math.min(maxMillis, initialMillis * Math.pow(factor, n - 1))
    const backoff = (delay: number): Effect.Effect<A, unknown, R> => {
      if (now + delay >= call.deadline) return Effect.fail(provider.totalTimeout(call, now, "backoff"))
      call.phase = "backoff"
      return Effect.flatMap(
        guarded(clock.sleep(Duration.millis(delay)), call, restore, undefined),
        (slept) => Exit.isSuccess(slept) ? attempt(n + 1, error) : Effect.failCause(slept.cause)
      )
    }
    return jitter === 0 ? backoff(exact) : Effect.flatMap(Random.next, (r) => backoff(exact * (1 - jitter * r)))
  }

  return attempt(1, undefined)
}

/**
 * Runs `effect` in a child fiber of the caller that the provider can end from outside, and waits
 * for it: the exit is the provider's error when it ended the fiber (the call's `ending`, or the
 * attempt's), else the fiber's own; on success what the fiber set in its refs passes to the
 * caller, as `Fiber.join` passes it. A caller interrupted while it waits interrupts the fiber,
 * and awaits it.
 */
const guarded = <X, R>(
  effect: Effect.Effect<X, unknown, R>,
  call: Call,
  restore: Restore,
  onInterrupt: (() => void) | undefined
): Effect.Effect<Exit.Exit<X, unknown>, never, R> =>
  // ended from outside while the caller was between two fibers
  call.ending !== undefined ? Effect.succeed(call.ending) : Effect.flatMap(Effect.fork(restore(effect)), (fiber) => {
    call.fiber = fiber
    call.attemptEnding = undefined
    // ended from outside between the fork and now: the fiber goes at once
    const wait = call.ending === undefined
      ? Fiber.await(fiber)
      : Effect.zipRight(Fiber.interruptFork(fiber), Fiber.await(fiber))
    return restore(wait).pipe(
      Effect.onInterrupt(() => Effect.zipRight(Fiber.interrupt(fiber), Effect.sync(() => onInterrupt?.()))),
      Effect.flatMap((exit): Effect.Effect<Exit.Exit<X, unknown>> => {
        call.fiber = undefined
        if (Exit.isSuccess(exit)) return Effect.as(Fiber.inheritAll(fiber), exit)
        const ending = Cause.isInterrupted(exit.cause) ? call.ending ?? call.attemptEnding : undefined
        return Effect.succeed(ending ?? exit)
      })
    )
  })

/** What an attempt's ending tells the circuit: only the call's own failures and `CallTimeout` count. */
const judge = (provider: ProviderState, exit: Exit.Exit<unknown, unknown>): "success" | "failure" | "neutral" => {
  if (Exit.isSuccess(exit)) return "success"
  // an interruption proves nothing; a defect of the call counts against the circuit
  if (Cause.isInterruptedOnly(exit.cause)) return "neutral"
  const failure = Cause.failureOrCause(exit.cause)
  if (Either.isRight(failure)) return "failure"
  const error = failure.left
  if (error instanceof CallFailed) return provider.resolved.isFailure(error.error) ? "failure" : "success"
  if (error instanceof ProviderError.CallTimeout) return "failure"
  // refused before reaching the upstream: the circuit learns nothing
  return "neutral"
}

/** Refusals that a retry could only repeat, whatever the predicate says. */
const neverRetried = new Set(["BulkheadFull", "CircuitOpen", "RetryBudgetExhausted", "TotalTimeout", "ProviderClosed"])

const isRetried = (provider: ProviderState, error: unknown): boolean => {
  if (error instanceof CallFailed) return provider.resolved.isRetryable(error.error)
  if (Predicate.hasProperty(error, "_tag") && typeof error._tag === "string" && neverRetried.has(error._tag)) {
    return false
  }
  return provider.resolved.isRetryable(error)
}

/** One attempt: bulkhead → rate limiter → the call (its budget watched from outside) → release. */
const attemptOnce = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  call: Call,
  clock: Clock.Clock
): Effect.Effect<A, unknown, R> => {
  const queuedAt = clock.unsafeCurrentTimeMillis()
  call.phase = "permit_wait"
  call.phaseDeadline = queuedAt + provider.permitWaitMillis
  const holding = Effect.suspend(() => {
    const granted = clock.unsafeCurrentTimeMillis()
    provider.permitWait.add(granted - queuedAt)
    // a permit granted as the total runs out (freed by a call that timed out at that instant, say)
    // comes too late, whichever of the grant and the total's timer ran first
    if (granted >= call.deadline) return Effect.fail(provider.totalTimeout(call, granted, "permit_wait"))
    const limiter = provider.limiter
    if (limiter === undefined) return callPhase(provider, self, call, clock)
    call.phase = "limiter_wait"
    call.phaseDeadline = Infinity
    // the limiter refuses at once a start the total budget could not wait for
    const left = call.deadline - granted
    const cost = call.perCall.cost
    const takeOptions = left < provider.limiterMaxWaitMillis
      ? { cost, maxWait: Duration.millis(left) }
      : cost === 1
      ? undefined
      : { cost }
    const afterWait = Effect.suspend(() => {
      const passed = clock.unsafeCurrentTimeMillis()
      provider.limiterWait.add(passed - granted)
      if (passed >= call.deadline) return Effect.fail(provider.totalTimeout(call, passed, "limiter_wait"))
      return callPhase(provider, self, call, clock)
    })
    const usage = call.perCall.usage
    if (usage === undefined) return Effect.zipRight(limiter.take(takeOptions), afterWait)
    return reserved(provider, limiter, takeOptions, afterWait, call, usage, clock)
  })
  const permits = call.perCall.permits
  return provider.bulkhead.run(holding, permits === 1 ? undefined : { cost: permits })
}

/**
 * The limiter's wait as a reservation, settled when the attempt ends, inside the permit: released
 * when the call never started, else as `usage` reads the call's ending. The reservation is taken
 * in an uninterruptible region but for the wait, so that no interruption falls between it and the
 * settle that owns it.
 */
const reserved = <A, R>(
  provider: ProviderState,
  limiter: RateLimiter.RateLimiter,
  takeOptions: RateLimiter.TakeOptions | undefined,
  afterWait: Effect.Effect<A, unknown, R>,
  call: Call,
  usage: Usage,
  clock: Clock.Clock
): Effect.Effect<A, unknown, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(restore(limiter.reserve(takeOptions)), (reservation) =>
      Effect.onExit(restore(afterWait), (exit) =>
        // `callPhase` set the phase: the call started, and the upstream may have counted it
        settle(provider, reservation, call.phase === "call" ? usage : undefined, exit, clock)))
  )

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
      settlement = usage(Exit.mapError(exit, unwrap))
    } catch (error) {
      return Effect.logWarning(
        `provider "${provider.name}": its usage function threw (${String(error)}); the estimate stands`
      )
    }
  }
  provider.settled(reservation, settlement, clock.unsafeCurrentTimeMillis())
  const settling = settlement === "release"
    ? reservation.release
    : settlement === undefined
    ? Effect.void
    : reservation.settle(settlement)
  return Effect.catchAll(
    settling,
    (error) => Effect.logWarning(`provider "${provider.name}": could not settle its reservation: ${error.message}`)
  )
}

/** The call, its time recorded however it ends. */
const callPhase = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  call: Call,
  clock: Clock.Clock
): Effect.Effect<A, unknown, R> => {
  const start = clock.unsafeCurrentTimeMillis()
  // only a limiter's rate is compared with the starts
  if (provider.limiterRate !== undefined) provider.starts.add(start)
  provider.dimensions?.started(start, call.perCall.cost)
  call.phase = "call"
  // an infinite attempt budget (a stream's, say) is no budget
  const budget = call.perCall.attemptTimeoutMillis
  const timeout = budget === Infinity ? undefined : budget
  call.phaseDeadline = timeout === undefined ? Infinity : start + timeout
  // the attempt budget is watched from outside (see `watchdog`)
  return Effect.ensuring(
    Effect.mapError(self, wrap),
    Effect.sync(() => {
      const took = clock.unsafeCurrentTimeMillis() - start
      provider.callTime.add(took)
      callSeconds.unsafeUpdate(took / 1000, provider.labels.name)
    })
  )
}
