/**
 * A budget for the wait alone, Effect 4's `Semaphore` beside the bulkhead (RFC 0003 §4). The
 * Semaphore has none: the budget at hand, `Effect.timeout` around `withPermits`, counts the wait
 * and the work together and fails with `TimeoutError`, so a call that waited 40 ms of a 50 ms
 * budget and then works 100 ms fails as if it had queued too long. The bulkhead's `maxWait` counts
 * the wait only, and its refusal names the bulkhead, the bound and the numbers. If Effect's half
 * ever fails, re-weigh using it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import { Cause, Effect, Exit, Fiber, Semaphore } from "effect"
import { TestClock } from "effect/testing"
import { uniqueName, yieldTurns } from "../utils.js"

describe("comparison: a wait budget, Effect 4's Semaphore and the bulkhead", () => {
  it.effect("Semaphore + timeout: the budget covers wait and work, and the error says neither", () =>
    Effect.gen(function*() {
      const semaphore = yield* Semaphore.make(1)
      const guard = Semaphore.withPermits(semaphore, 1)
      yield* Effect.forkChild(guard(Effect.sleep("40 millis")))
      yield* yieldTurns()
      const call = yield* Effect.forkChild(Effect.timeout(guard(Effect.sleep("100 millis")), "50 millis"))
      yield* yieldTurns()
      yield* TestClock.adjust("200 millis")
      const exit = yield* Fiber.await(call)
      // it got its permit at 40 ms, inside the budget, and still failed at 50 ms while working
      assert(Exit.isFailure(exit))
      assert(Cause.hasFails(exit.cause))
      const error = Cause.squash(exit.cause)
      assert(Cause.isTimeoutError(error))
    }))

  it.effect("bulkhead maxWait: the wait alone, refused with the bulkhead's name and numbers", () =>
    Effect.gen(function*() {
      const name = uniqueName("wait-budget")
      const bulkhead = yield* Bulkhead.make({ name, permits: 1, maxWait: "50 millis" })
      yield* Effect.forkChild(bulkhead.run(Effect.sleep("40 millis")))
      yield* yieldTurns()
      // waits 40 ms of its 50, then works 100 ms: the work is not the budget's
      const served = yield* Effect.forkChild(bulkhead.run(Effect.sleep("100 millis")))
      yield* yieldTurns()
      yield* TestClock.adjust("200 millis")
      assert(Exit.isSuccess(yield* Fiber.await(served)))
      // a wait past the budget: the typed refusal
      yield* Effect.forkChild(bulkhead.run(Effect.sleep("100 millis")))
      yield* yieldTurns()
      const late = yield* Effect.forkChild(bulkhead.run(Effect.void))
      yield* yieldTurns()
      yield* TestClock.adjust("60 millis")
      const error = yield* Effect.flip(Fiber.join(late))
      assert.strictEqual(error._tag, "PermitWaitTimeout")
      assert.match(String(error), new RegExp(`^PermitWaitTimeout: bulkhead "${name}"`))
    }))
})
