/** @internal */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import type * as Tracer from "effect/Tracer"
import type * as Api from "../Provider.js"
import { attempts } from "./attempts.js"
import { unwrapExit } from "./callFailed.js"
import { outcomeOf } from "./metrics.js"
import { type PerCall, perCall } from "./options.js"
import { Call, type ProviderState } from "./state.js"

/**
 * `Provider.call`: the span, then the call's lifecycle. The attempts run in a fiber of their own,
 * a child of the caller's, so that the provider can end them from outside (the total budget,
 * shutdown's grace period) while the caller lives on and sees the provider's error. The caller
 * waits for that fiber; what the call changed in its fiber refs passes to the caller, as
 * `Fiber.join` passes it.
 *
 * @internal
 */
export const call = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  options: Api.CallOptions | undefined
): Effect.Effect<A, unknown, R> =>
  Effect.suspend(() => {
    const settings = perCall(provider.resolved, provider.defaults, options)
    // with tracing off a span would be a no-op that nothing can reach: none is made
    return Effect.flatMap(FiberRef.get(FiberRef.currentTracerEnabled), (traced) =>
      traced
        ? Effect.useSpan(
          "Provider.call",
          provider.spanOptions,
          (span) => Effect.withParentSpan(lifecycle(provider, self, settings, span), span)
        )
        : lifecycle(provider, self, settings, undefined))
  })

const lifecycle = <A, E, R>(
  provider: ProviderState,
  self: Effect.Effect<A, E, R>,
  settings: PerCall,
  span: Tracer.Span | undefined
): Effect.Effect<A, unknown, R> =>
  Effect.clockWith((clock) => {
    if (provider.closing) {
      provider.count("closed")
      return Effect.fail(provider.closed("closing"))
    }
    const now = clock.unsafeCurrentTimeMillis()
    const total = settings.totalTimeoutMillis
    const call = new Call(now, total === undefined ? now + Infinity : now + total, settings, span)
    provider.inFlight++
    // the call's fiber is forked and registered with no interruption in between, so that it never
    // runs without a caller; only the wait for it is interruptible
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.fork(restore(attempts(provider, self, call, clock))), (fiber) => {
        call.fiber = fiber
        provider.active.add(call)
        const timer = total === undefined ? Effect.succeed(undefined) : Effect.fork(totalBudget(provider, call, clock))
        return Effect.flatMap(timer, (timer) =>
          restore(Fiber.await(fiber)).pipe(
            // the caller was interrupted: the call is interrupted too, and awaited
            Effect.onInterrupt(() =>
              Effect.zipRight(
                Effect.zipRight(Fiber.interrupt(fiber), stop(timer)),
                Effect.sync(() => end(provider, call, Exit.interrupt(fiber.id())))
              )
            ),
            Effect.flatMap((exit) => Effect.zipRight(stop(timer), settle(provider, call, fiber, exit)))
          ))
      })
    )
  })

const stop = (timer: Fiber.RuntimeFiber<void> | undefined): Effect.Effect<void> =>
  timer === undefined ? Effect.void : Fiber.interrupt(timer)

/** The call's fiber has ended: counted once, as the caller sees it, and the caller resumes. */
const settle = <A>(
  provider: ProviderState,
  call: Call,
  fiber: Fiber.RuntimeFiber<A, unknown>,
  exit: Exit.Exit<A, unknown>
): Effect.Effect<A, unknown> => {
  // ended from outside: the provider's error, not the interruption it took
  const ending = call.ending !== undefined && Exit.isFailure(exit) && Cause.isInterrupted(exit.cause)
    ? call.ending
    : undefined
  end(provider, call, ending ?? exit)
  if (ending !== undefined) return ending
  if (Exit.isFailure(exit)) return unwrapExit(exit)
  return Effect.as(Fiber.inheritAll(fiber), exit.value)
}

const end = (provider: ProviderState, call: Call, exit: Exit.Exit<unknown, unknown>): void => {
  const outcome = outcomeOf(exit)
  provider.finish(call, outcome)
  // as `Effect.withSpan` records it, without capturing a stack trace on every call
  if (Exit.isFailure(exit) && call.span !== undefined) {
    call.span.attribute("code.stacktrace", provider.spanTrace())
  }
}

/**
 * The total budget: when it runs out, the call ends with `TotalTimeout`. When the current phase's
 * own budget (attempt, permit wait) ends at the same instant, the total steps aside and lets the
 * innermost budget report: the call then ends by itself, since no attempt starts past the total.
 */
const totalBudget = (provider: ProviderState, call: Call, clock: Clock.Clock): Effect.Effect<void> =>
  // interruptible even for a caller that is not: the timer goes as soon as the call has ended
  Effect.interruptible(clock.sleep(Duration.millis(call.deadline - call.startedAt))).pipe(
    Effect.zipRight(Effect.suspend(() => {
      const now = clock.unsafeCurrentTimeMillis()
      const innerDue = (call.phase === "call" || call.phase === "permit_wait") && call.phaseDeadline <= now
      return innerDue || call.done ? Effect.void : endFromOutside(call, provider.totalTimeout(call, now, call.phase))
    }))
  )

/**
 * Ends a call from outside (its total budget, shutdown): its fiber is interrupted, and the caller
 * gets `error` once the fiber has ended.
 *
 * @internal
 */
export const endFromOutside = (call: Call, error: unknown): Effect.Effect<void> => {
  if (call.done || call.ending !== undefined || call.fiber === undefined) return Effect.void
  call.ending = Exit.fail(error)
  return Fiber.interruptFork(call.fiber)
}
