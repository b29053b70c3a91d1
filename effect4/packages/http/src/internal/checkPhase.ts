/**
 * The scheduler a provider client's calls run on by default (see `Options.scheduler`): each
 * dispatch an immediate of its own. On Effect 4.1 a Scheduler decides where yields and forks
 * run; a fiber that an I/O callback resumes runs in that callback, whatever the Scheduler, so the
 * 0.x line's reordering of resumed work behind undici's deferred writes does not carry over
 * (`scheduler.test.ts` pins it).
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
