/**
 * The scheduler a provider client's calls run on by default (see `Options.scheduler`).
 *
 * undici writes a request on a kept-alive connection from a `setImmediate` of its own: it first
 * lets the socket show whether the server closed it while it was idle. Under Effect's default
 * scheduler a fiber resumed by I/O runs in the microtasks of that I/O's callback, so a turn of the
 * event loop that reads many responses runs all the work they resume in its poll phase, and a
 * request handed to undici in that turn leaves only after all of it: the delay varies with the
 * load, and requests a rate limiter spaced arrive bunched. Run from the check phase instead (each
 * fiber's wake-up an immediate), the work waits behind the writes already queued there, and the
 * poll phase only reads.
 *
 * @internal
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Scheduler from "effect/Scheduler"

/**
 * Each wake-up an immediate of its own, whatever the platform's default: on Effect 4 the
 * scheduler is a `Context.Reference`, provided for the call.
 *
 * @internal
 */
export const checkPhase: Scheduler.Scheduler = new Scheduler.MixedScheduler("async", (f) => {
  const timer = setImmediate(f)
  return () => clearImmediate(timer)
})

/**
 * The TestClock (`effect/testing/TestClock`, `@effect/vitest`'s `it.effect`): it moves time once
 * the fibers look suspended, and a fiber waiting for its next immediate looks suspended, so a test
 * that makes many calls before it sleeps could register its sleep after the clock moved, and wait
 * for good.
 */
const isTestClock = (clock: Clock.Clock): boolean => "adjust" in clock && "setTime" in clock

/**
 * Runs a call on `scheduler` (the caller's when `undefined`), except under the TestClock, where it
 * stays on the caller's.
 *
 * @internal
 */
export const scheduledOn =
  (scheduler: Scheduler.Scheduler | undefined) => <A, E, R>(call: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    scheduler === undefined
      ? call
      : Effect.clockWith((clock) =>
        isTestClock(clock) ? call : Effect.provideService(call, Scheduler.Scheduler, scheduler)
      )
