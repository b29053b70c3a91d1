/** @internal */
import { RateLimiter } from "@sluice/rate-limiter"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import * as Random from "effect/Random"
import * as ProviderError from "../ProviderError.js"
import { CallFailed, unwrap, wrap } from "./callFailed.js"
import { callSeconds } from "./metrics.js"
import type { Call, ProviderState } from "./state.js"

/**
 * The attempts of one call, run in the call's fiber: before each, the retry budget (for a retry)
 * and the circuit breaker; then bulkhead → rate limiter → attempt timeout → the call → release;
 * between attempts a backoff that holds nothing.
 *
 * @internal
 */
export const attempts = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  call: Call,
  clock: Clock.Clock
): Effect.Effect<A, unknown, R> => {
  const attempt = (n: number, lastError: unknown): Effect.Effect<A, unknown, R> => {
    const now = clock.unsafeCurrentTimeMillis()
    const budget = provider.resolved.budget
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
    const breaker = provider.breaker
    if (breaker === undefined) return Effect.catchAllCause(start(n, now), (cause) => retry(n, cause))
    // admitted and watched with no interruption in between: the breaker learns from every ending
    // of the attempt, an interruption included (the caller's, the total budget's, shutdown's), so
    // that a probe never stays in flight for good
    const admitted = Effect.uninterruptibleMask((restore) => {
      const admission = breaker.admit(now)
      if (admission._tag === "Refuse") {
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
      return Effect.onExit(restore(start(n, now)), (exit) =>
        Effect.sync(() => {
          const verdict = judge(provider, exit)
          if (verdict === "success") breaker.onSuccess(admission.probe)
          else if (verdict === "failure") breaker.onFailure(admission.probe, clock.unsafeCurrentTimeMillis())
          else breaker.onNeutral(admission.probe)
        }))
    })
    return Effect.catchAllCause(admitted, (cause) => retry(n, cause))
  }

  const start = (n: number, now: number): Effect.Effect<A, unknown, R> => {
    const budget = provider.resolved.budget
    if (n === 1) budget?.recordFirst(now)
    else budget?.recordRetry(now)
    call.attempt = n
    provider.attempts++
    return attemptOnce(provider, self, call, clock)
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
      return Effect.zipRight(clock.sleep(Duration.millis(delay)), Effect.suspend(() => attempt(n + 1, error)))
    }
    return jitter === 0 ? backoff(exact) : Effect.flatMap(Random.next, (r) => backoff(exact * (1 - jitter * r)))
  }

  return Effect.suspend(() => attempt(1, undefined))
}

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

/** One attempt: bulkhead → rate limiter → attempt timeout → the call → release. */
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
    const take = left < provider.limiterMaxWaitMillis
      ? limiter.take({ cost, maxWait: Duration.millis(left) })
      : limiter.take(cost === 1 ? undefined : { cost })
    return Effect.zipRight(
      take,
      Effect.suspend(() => {
        const passed = clock.unsafeCurrentTimeMillis()
        provider.limiterWait.add(passed - granted)
        if (passed >= call.deadline) return Effect.fail(provider.totalTimeout(call, passed, "limiter_wait"))
        return callPhase(provider, self, call, clock)
      })
    )
  })
  const permits = call.perCall.permits
  return provider.bulkhead.run(holding, permits === 1 ? undefined : { cost: permits })
}

/** The call under its attempt budget, its time recorded however it ends. */
const callPhase = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  call: Call,
  clock: Clock.Clock
): Effect.Effect<A, unknown, R> => {
  const start = clock.unsafeCurrentTimeMillis()
  // only a limiter's rate is compared with the starts
  if (provider.limiterRate !== undefined) provider.starts.add(start)
  call.phase = "call"
  // an infinite attempt budget (a stream's, say) is no budget
  const budget = call.perCall.attemptTimeoutMillis
  const timeout = budget === Infinity ? undefined : budget
  call.phaseDeadline = timeout === undefined ? Infinity : start + timeout
  const wrapped = Effect.mapError(self, wrap)
  const timed = timeout === undefined ? wrapped : Effect.timeoutFail(wrapped, {
    duration: Duration.millis(timeout),
    onTimeout: () =>
      new ProviderError.CallTimeout({
        provider: provider.name,
        timeout: Duration.millis(timeout),
        attempt: call.attempt,
        maxAttempts: call.perCall.maxAttempts
      })
  })
  return Effect.ensuring(
    timed,
    Effect.sync(() => {
      const took = clock.unsafeCurrentTimeMillis() - start
      provider.callTime.add(took)
      callSeconds.unsafeUpdate(took / 1000, provider.labels.name)
    })
  )
}
