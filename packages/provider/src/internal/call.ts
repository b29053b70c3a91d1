/** @internal */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import type * as Tracer from "effect/Tracer"
import type * as Api from "../Provider.js"
import { attempts } from "./attempts.js"
import { unwrap } from "./callFailed.js"
import { outcomeOf } from "./metrics.js"
import { type PerCall, perCall } from "./options.js"
import { Call, type ProviderState } from "./state.js"
import { interruptAttempt } from "./watchdog.js"

/**
 * `Provider.call`: the span, then the call's lifecycle. The caller runs the attempts; each attempt
 * (and each backoff) runs in a fiber of its own, a child of the caller's, so that the provider can
 * end it from outside (the attempt and total budgets, shutdown's grace period) while the caller
 * lives on and sees the provider's error. What a successful attempt set in its fiber refs passes
 * to the caller, as `Fiber.join` passes it.
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
    const call = new Call(now, total === undefined ? Infinity : now + total, settings, span)
    const attemptBudget = settings.attemptTimeoutMillis
    const watched = total !== undefined || (attemptBudget !== undefined && attemptBudget !== Infinity)
    // registered, watched and counted with no interruption in between; only the waits for the
    // call's fibers are interruptible (`restore`)
    return Effect.uninterruptibleMask((restore) => {
      provider.inFlight++
      provider.active.add(call)
      if (watched) provider.watchdog.watch(call, now)
      return attempts(provider, self, call, clock, restore).pipe(
        Effect.onExit((exit) => Effect.sync(() => end(provider, call, exit))),
        Effect.mapError(unwrap)
      )
    })
  })

const end = (provider: ProviderState, call: Call, exit: Exit.Exit<unknown, unknown>): void => {
  provider.finish(call, outcomeOf(exit))
  // as `Effect.withSpan` records it, without capturing a stack trace on every call
  if (Exit.isFailure(exit) && call.span !== undefined) {
    call.span.attribute("code.stacktrace", provider.spanTrace())
  }
}

/**
 * Ends a call from outside (shutdown): the fiber of its attempt or backoff is interrupted, and
 * the caller gets `error` once that fiber has ended.
 *
 * @internal
 */
export const endFromOutside = (call: Call, error: unknown): Effect.Effect<void> => {
  if (call.done || call.ending !== undefined) return Effect.void
  call.ending = Exit.fail(error)
  return interruptAttempt(call)
}
