/** @internal */
import { RateLimiter } from "@sluice/rate-limiter"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Predicate from "effect/Predicate"
import * as Random from "effect/Random"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import type * as Tracer from "effect/Tracer"
import type * as Api from "../Provider.js"
import * as ProviderError from "../ProviderError.js"
import { attempt } from "./attempt.js"
import { CallFailed, unwrap } from "./callFailed.js"
import type { Judgement } from "./circuitBreaker.js"
import { CurrentLane } from "./lane.js"
import { outcomeOf } from "./metrics.js"
import { type PerCall, perCall } from "./options.js"
import { Progress, type ProviderState } from "./providerState.js"
import { refusal } from "./retryBudget.js"

/**
 * `Provider.call`, top to bottom: refused at once while the provider closes; the span (none with
 * tracing off); the call counted in and out; its attempts, retried on a `Schedule`. With a finite
 * grace period they run in a fiber of the provider's `FiberSet`, so that shutdown can end them
 * while the caller lives on and sees `ProviderClosed`; under `gracePeriod: Infinity`, in the
 * caller's fiber.
 *
 * @internal
 */
export const call = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  options: Api.CallOptions | undefined
): Effect.Effect<A, unknown, R> =>
  Effect.withFiber((fiber) => {
    if (provider.closing) return provider.refused()
    const lane = provider.laneFor(options?.lane, fiber.getRef(CurrentLane))
    const settings = perCall(provider.resolved, provider.defaults, options, lane)
    return fiber.getRef(References.TracerEnabled)
      ? Effect.useSpan(
        "Provider.call",
        provider.spanOptions,
        (span) => Effect.withParentSpan(lifecycle(provider, self, settings, span), span)
      )
      : lifecycle(provider, self, settings, undefined)
  })

const lifecycle = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  settings: PerCall,
  span: Tracer.Span | undefined
): Effect.Effect<A, unknown, R> =>
  Effect.clockWith((clock) => {
    const now = clock.currentTimeMillisUnsafe()
    const total = settings.totalTimeoutMillis
    const progress = new Progress(now, total === undefined ? Infinity : now + total, settings)
    const attempts = retried(provider, self, progress, clock)
    const ended = (exit: Exit.Exit<unknown, unknown>) =>
      Effect.sync(() => end(provider, progress, exit, span, clock.currentTimeMillisUnsafe()))
    // counted in and watched with no interruption in between; only the call itself is interruptible
    return Effect.uninterruptibleMask((restore): Effect.Effect<A, unknown, R> => {
      // checked again where it counts: shutdown may have found no call in flight since
      if (provider.closing) return provider.refused()
      provider.inFlight++
      // shutdown waits for every call, however long: nothing ever ends one from outside, so it
      // runs in its caller's fiber, as it would without a provider
      if (provider.gracePeriodMillis === Infinity) return Effect.onExit(restore(attempts), ended)
      // otherwise in a fiber of the provider's, which shutdown can end after the grace period
      const forked = Effect.flatMap(FiberSet.run(provider.running, restore(attempts)), (fiber) =>
        Effect.flatMap(
          Effect.onInterrupt(restore(Fiber.await(fiber)), () => Fiber.interrupt(fiber)),
          (exit): Effect.Effect<A, unknown> => {
            // Effect 4 has no fiber refs to pass back: what the call set stays in its fiber
            if (Exit.isSuccess(exit)) return Effect.succeed(exit.value)
            if (provider.graceElapsed && Cause.hasInterruptsOnly(exit.cause)) {
              return Effect.fail(provider.closed("grace-period-elapsed"))
            }
            return Effect.failCause(exit.cause)
          }
        ))
      return Effect.onExit(forked, ended)
    }).pipe(Effect.mapError(unwrap))
  })

const end = (
  provider: ProviderState,
  progress: Progress,
  exit: Exit.Exit<unknown, unknown>,
  span: Tracer.Span | undefined,
  now: number
): void => {
  provider.finish(progress, outcomeOf(exit), span, now)
  // as `Effect.withSpan` records it, without capturing a stack trace on every call
  if (Exit.isFailure(exit) && span !== undefined) span.attribute("code.stacktrace", provider.spanTrace())
}

/**
 * The attempts: one, or as many as the provider's backoff `Schedule` (exponential, capped,
 * jittered, `maxAttempts - 1` recurrences) allows while the error is retried and the backoff ends
 * within the total budget; one that would not fails with `TotalTimeout` at once. The schedule is
 * stepped as `Effect.retry` steps it, but only once an attempt has failed (a call that succeeds at
 * once pays nothing for it), and its delay is checked against the deadline before the sleep.
 */
const retried = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  progress: Progress,
  clock: Clock.Clock
): Effect.Effect<A, unknown, R> => {
  const once = guarded(provider, self, progress, clock)
  const maxAttempts = progress.settings.maxAttempts
  if (maxAttempts === 1) return once
  return Effect.catch(once, (first) =>
    Effect.flatMap(Schedule.toStep(backoff(provider, maxAttempts)), (step) => {
      const retry = (error: unknown): Effect.Effect<A, unknown, R> => {
        if (!isRetried(provider, error)) return Effect.fail(error)
        const now = clock.currentTimeMillisUnsafe()
        return Effect.matchEffect(step(now, error), {
          // the schedule is done: the attempts are used up, and the last error stands
          onFailure: () => Effect.fail(error),
          onSuccess: ([, backoffDelay]) => {
            const delay = retryDelay(provider, error, backoffDelay)
            // the attempt and the total ended at the same instant: the attempt's error stands
            if (now >= progress.deadline) return Effect.fail(error)
            if (now + Duration.toMillis(delay) >= progress.deadline) {
              return Effect.fail(provider.totalTimeout(progress, now, "backoff"))
            }
            progress.phase = "backoff"
            return Effect.andThen(Effect.sleep(delay), Effect.catch(once, retry))
          }
        })
      }
      return retry(first)
    }))
}

const backoff = (provider: ProviderState, maxAttempts: number): Schedule.Schedule<Duration.Duration, unknown> => {
  const { factor, initialMillis, jitter, maxMillis } = provider.resolved.backoff
  const max = Duration.millis(maxMillis)
  const capped = Schedule.exponential(Duration.millis(initialMillis), factor).pipe(
    Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, max)))
  )
  // shortened by up to `jitter` of itself: a delay × (1 − jitter … 1)
  const jittered = jitter === 0 ? capped : capped.pipe(
    Schedule.modifyDelay(({ duration }) =>
      Effect.map(Random.next, (r) => Duration.millis(Duration.toMillis(duration) * (1 - jitter + jitter * r)))
    )
  )
  return Schedule.upTo(jittered, { times: maxAttempts - 1 })
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

/**
 * One attempt behind the policies: a retry first asks the retry budget, then every attempt the
 * circuit breaker, which learns how it ended (only the call's own failures and `CallTimeout`
 * count against it).
 */
const guarded = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  progress: Progress,
  clock: Clock.Clock
): Effect.Effect<A, unknown, R> => {
  const { breaker, budget } = provider
  const run = Effect.suspend(() => {
    const n = progress.attempt + 1
    if (budget !== undefined) {
      const now = clock.currentTimeMillisUnsafe()
      if (n === 1) budget.recordFirst(now)
      else budget.recordRetry(now)
    }
    progress.attempt = n
    provider.attempts++
    return Effect.tapError(
      attempt(provider, self, progress, clock),
      (error) => failed(provider, progress, error, clock)
    )
  })
  const admitted = breaker === undefined
    ? run
    : breaker.guard(run, provider.breakerOwner, (exit) => judge(provider, exit))
  if (budget === undefined) return admitted
  return Effect.suspend(() => {
    progress.phase = "circuit"
    const n = progress.attempt + 1
    if (n === 1) return admitted
    const refused = refusal(budget, provider.budgetOwner, n, progress.lastError, clock.currentTimeMillisUnsafe())
    return refused === undefined ? admitted : Effect.fail(refused)
  })
}

/** A failed attempt: its error kept for the retry budget's refusal, and counted for the verdict. */
const failed = (provider: ProviderState, progress: Progress, error: unknown, clock: Clock.Clock): Effect.Effect<void> =>
  Effect.sync(() => {
    progress.lastError = unwrap(error)
    const upstream = error instanceof CallFailed && provider.resolved.isUpstream(error.error)
    if (upstream) provider.upstreamErrors++
    if (RateLimiter.isRateLimiterError(error) && error._tag === "RateLimiterStoreError") provider.storeErrors++
    if (provider.recorder !== undefined) {
      provider.recorder.failed(clock.currentTimeMillisUnsafe(), upstream, pauseOf(progress.lastError))
    }
  })

/**
 * The wait before a retry: the backoff's, or longer when the upstream asked for a pause
 * (`retryAfter`) and no limiter holds every caller for it. A limiter's pause makes the retry wait
 * in the limiter instead, which the backoff must not repeat.
 */
const retryDelay = (provider: ProviderState, error: unknown, backoff: Duration.Duration): Duration.Duration => {
  if (provider.limiter !== undefined) return backoff
  const pause = pauseOf(unwrap(error))
  return pause === undefined ? backoff : Duration.max(backoff, Duration.millis(pause))
}

/** The limiter's pause an upstream error asked for: a `retryAfter` duration on it (as `@sluice/http`'s 429 carries). */
const pauseOf = (error: unknown): number | undefined =>
  Predicate.hasProperty(error, "retryAfter") && Duration.isDuration(error.retryAfter)
    ? Duration.toMillis(error.retryAfter)
    : undefined

/** What an attempt's ending tells the circuit: only the call's own failures and `CallTimeout` count. */
const judge = (provider: ProviderState, exit: Exit.Exit<unknown, unknown>): Judgement => {
  if (Exit.isSuccess(exit)) return "success"
  // an interruption proves nothing; a defect of the call counts against the circuit
  if (Cause.hasInterruptsOnly(exit.cause)) return "neutral"
  const failure = Cause.findError(exit.cause)
  if (Result.isFailure(failure)) return "failure"
  const error = failure.success
  if (error instanceof CallFailed) return provider.resolved.isFailure(error.error) ? "failure" : "success"
  if (error instanceof ProviderError.CallTimeout) return "failure"
  // refused before reaching the upstream, or ended by the total budget: the circuit learns nothing
  return "neutral"
}
