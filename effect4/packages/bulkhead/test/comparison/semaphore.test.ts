/**
 * Effect 4's own `Semaphore` beside the bulkhead, on one scenario (RFC 0003 §4): 3 permits all
 * taken, a call for 3 queued before a call for 1, then one permit released. The Semaphore grants
 * the first waiter that fits (the 1 overtakes the 3); the bulkhead grants in arrival order and
 * holds the light call behind the heavy one. If Effect's half ever fails, re-weigh using it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import { Deferred, Effect, Fiber, Semaphore } from "effect"
import { uniqueName, yieldTurns } from "../utils.js"

describe("comparison: Effect 4's Semaphore and the bulkhead", () => {
  it.effect("Semaphore: a lighter later call overtakes a heavier earlier one", () =>
    Effect.gen(function*() {
      const semaphore = yield* Semaphore.make(3)
      const order: Array<string> = []
      const holders = yield* Effect.forEach(
        [1, 2, 3],
        () => Effect.forkChild(Semaphore.withPermits(semaphore, 1)(Effect.never))
      )
      yield* yieldTurns()
      const big = yield* Effect.forkChild(
        Semaphore.withPermits(semaphore, 3)(Effect.sync(() => order.push("big3")))
      )
      yield* yieldTurns()
      const small = yield* Effect.forkChild(
        Semaphore.withPermits(semaphore, 1)(Effect.sync(() => order.push("small1")))
      )
      yield* yieldTurns()
      yield* Fiber.interrupt(holders[0])
      yield* yieldTurns()
      assert.deepStrictEqual(order, ["small1"])
      yield* Effect.forEach(holders, Fiber.interrupt)
      yield* Fiber.join(big)
      yield* Fiber.join(small)
      assert.deepStrictEqual(order, ["small1", "big3"])
    }))

  it.effect("bulkhead: the heavier earlier call goes first; the lighter one waits behind it", () =>
    Effect.gen(function*() {
      const bulkhead = yield* Bulkhead.make({ name: uniqueName("vs-semaphore"), permits: 3 })
      const order: Array<string> = []
      const release = yield* Deferred.make<void>()
      const holders = yield* Effect.forEach(
        [1, 2, 3],
        (i) => Effect.forkChild(bulkhead.run(i === 1 ? Deferred.await(release) : Effect.never))
      )
      yield* yieldTurns()
      const big = yield* Effect.forkChild(bulkhead.run(Effect.sync(() => order.push("big3")), { permits: 3 }))
      yield* yieldTurns()
      const small = yield* Effect.forkChild(bulkhead.run(Effect.sync(() => order.push("small1"))))
      yield* yieldTurns()
      yield* Deferred.succeed(release, undefined)
      yield* yieldTurns()
      // one permit is free, but the head needs 3: nobody overtakes it
      assert.deepStrictEqual(order, [])
      assert.include(yield* bulkhead.stats, { inFlight: 2, waiting: 2 })
      yield* Effect.forEach(holders, Fiber.interrupt)
      yield* Fiber.join(big)
      yield* Fiber.join(small)
      assert.deepStrictEqual(order, ["big3", "small1"])
    }))
})
