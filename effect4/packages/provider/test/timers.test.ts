import { assert, describe, it } from "@effect/vitest"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import { expectIdle, now, uniqueName, yieldTurns } from "./utils.js"

/** Each call's budgets run on its own clock: the attempt's from its call's start, the total's from the call's. */
describe("the budgets of every call, each on its own instant", () => {
  it.effect("an attempt budget counts from the call's start, not from the permit wait before it", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({ name: uniqueName("wd-permit"), bulkhead: { permits: 1 } })
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(provider.call(Deferred.await(gate)))
      yield* yieldTurns()
      const slow = yield* Effect.forkChild(Effect.flip(provider.call(Effect.never, { attemptTimeout: "1 second" })))
      yield* yieldTurns()
      // at 1 s the call has not started: its budget has not begun
      yield* TestClock.adjust("2500 millis")
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      yield* yieldTurns()
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(slow.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(slow)
      assert.strictEqual(error._tag, "CallTimeout")
      assert.strictEqual(yield* now, 3500)
      yield* expectIdle(provider.bulkhead)
    }))

  it.effect("after a limiter sleep, and afresh for each retry", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("wd-limiter"),
        bulkhead: { permits: 2 },
        rateLimiter: { limit: 1, window: "3 seconds" },
        attemptTimeout: "1 second",
        retry: { maxAttempts: 2, backoff: { initial: "500 millis", jitter: 0 }, budget: false }
      })
      yield* provider.call(Effect.void)
      const started: Array<number> = []
      const fiber = yield* Effect.forkChild(Effect.flip(provider.call(Effect.andThen(
        Effect.flatMap(now, (t) => Effect.sync(() => started.push(t))),
        Effect.never
      ))))
      yield* yieldTurns()
      // asleep in the limiter until 3 s, the call until 4 s; a backoff to 4.5 s, the limiter until 6 s
      yield* TestClock.adjust("7 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "CallTimeout")
      if (error._tag === "CallTimeout") assert.strictEqual(error.attempt, 2)
      assert.deepStrictEqual(started, [3000, 6000])
      yield* expectIdle(provider.bulkhead)
    }).pipe(Effect.provide(RateLimiterStore.layerMemory)))

  it.effect("nothing left running after calls that complete at once: closing needs no time", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const provider = yield* Provider.make({
        name: uniqueName("wd-done"),
        bulkhead: { permits: 1 },
        attemptTimeout: "1 second",
        totalTimeout: "2 seconds",
        gracePeriod: "1 hour"
      }).pipe(Scope.provide(scope))
      for (let i = 0; i < 5; i++) assert.strictEqual(yield* provider.call(Effect.succeed(i)), i)
      assert.deepInclude((yield* provider.stats).outcomes, { success: 5, call_timeout: 0, total_timeout: 0 })
      assert.strictEqual((yield* provider.stats).inFlight, 0)
      // Effect 4 has no Exit, Scope: a call left in the provider's FiberSet would hold the close for the hour
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* yieldTurns()
      assert.isDefined(closing.pollUnsafe())
      assert.strictEqual(yield* now, 0)
    }))

  it.effect("a later call with a shorter budget ends first; each call ends at its own instant", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("wd-early"),
        bulkhead: { permits: 4 },
        totalTimeout: "10 seconds"
      })
      const ended: Array<[string, number]> = []
      const track = (label: string, options?: Provider.CallOptions) =>
        Effect.forkChild(
          Effect.flip(provider.call(Effect.never, options)).pipe(
            Effect.tap(() => Effect.flatMap(now, (t) => Effect.sync(() => ended.push([label, t]))))
          )
        )
      const long = yield* track("long")
      yield* yieldTurns()
      const short = yield* track("short", { totalTimeout: "1 second" })
      const attempt = yield* track("attempt", { attemptTimeout: "2500 millis" })
      yield* yieldTurns()
      yield* TestClock.adjust("10 seconds")
      const errors = [yield* Fiber.join(short), yield* Fiber.join(attempt), yield* Fiber.join(long)]
      assert.deepStrictEqual(errors.map((e) => e._tag), ["TotalTimeout", "CallTimeout", "TotalTimeout"])
      assert.deepStrictEqual(ended, [["short", 1000], ["attempt", 2500], ["long", 10000]])
      yield* expectIdle(provider.bulkhead)
    }))

  it.effect("a call interrupted by shutdown is gone when the scope has closed", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const provider = yield* Provider.make({
        name: uniqueName("wd-scope"),
        bulkhead: { permits: 1 },
        totalTimeout: "1 hour",
        gracePeriod: "1 second"
      }).pipe(Scope.provide(scope))
      const released = yield* Deferred.make<void>()
      const caller = yield* Effect.forkChild(
        Effect.flip(provider.call(Effect.onInterrupt(Effect.never, () => Deferred.succeed(released, undefined))))
      )
      yield* yieldTurns()
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(closing)
      // the close returned only once the call's own finalizer had run and its permit was back
      assert.isTrue(yield* Deferred.isDone(released))
      assert.strictEqual((yield* Fiber.join(caller))._tag, "ProviderClosed")
      assert.strictEqual((yield* provider.bulkhead.stats).inFlight, 0)
      assert.strictEqual(yield* now, 1000)
    }))
})
