/**
 * The behaviours Effect's own `RateLimiter` tests check (effect v3, `packages/effect/test/
 * RateLimiter.test.ts`), asked of sluice's limiter on Effect 4 for each of its algorithms. Effect's
 * "token-bucket" is a GCRA with `burst = limit` here. Where sluice decides otherwise on purpose
 * (fixed windows serve in arrival order), the test says so and pins sluice's rule.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Clock, Deferred, Effect, Exit, Fiber, Option, Ref, Result } from "effect"
import { TestClock } from "effect/testing"

const algorithms = ["gcra", "fixed-window", "sliding-window"] as const

/** `limit` per second under `algorithm`, GCRA with its whole limit as burst (a token bucket). */
const limiterOf = (algorithm: RateLimiter.Algorithm, limit: number) =>
  RateLimiter.make(
    algorithm === "gcra"
      ? { name: `ported-${algorithm}`, limit, window: "1 second", burst: limit }
      : { name: `ported-${algorithm}`, limit, window: "1 second", algorithm }
  ).pipe(Effect.provide(RateLimiterStore.layerMemory))

const fixedWindow = (name: string, limit: number) =>
  RateLimiter.make({ name, limit, window: "1 second", algorithm: "fixed-window" }).pipe(
    Effect.provide(RateLimiterStore.layerMemory)
  )

describe("ported from Effect's RateLimiter tests", () => {
  for (const algorithm of algorithms) {
    describe(algorithm, () => {
      it.effect("runs up to the limit at once", () =>
        Effect.gen(function*() {
          const limiter = yield* limiterOf(algorithm, 10)
          const times = yield* Effect.replicateEffect(limiter.run(Clock.currentTimeMillis), 10)
          expect(times).toEqual(Array.from({ length: 10 }, () => 0))
        }))

      it.effect("admits exactly the limit at once, however the callers arrive", () =>
        Effect.gen(function*() {
          const limiter = yield* limiterOf(algorithm, 10)
          const first = yield* Effect.all(Array.from({ length: 5 }, () => limiter.run(Clock.currentTimeMillis)), {
            concurrency: "unbounded"
          })
          const rest = yield* Effect.forEach(
            Array.from({ length: 15 }),
            () => Effect.forkChild(limiter.run(Clock.currentTimeMillis))
          )
          yield* TestClock.adjust("1 second")
          const times = [...first, ...(yield* Effect.forEach(rest, Fiber.join))]
          expect(times.filter((t) => t === 0)).toHaveLength(10)
        }))

      it.effect("passes the result and the failure of the call through, and goes on after a failure", () =>
        Effect.gen(function*() {
          const limiter = yield* limiterOf(algorithm, 10)
          assert.strictEqual(yield* limiter.run(Effect.succeed(3)), 3)
          const failed = yield* limiter.run(Effect.result(Effect.fail(Option.none())))
          assert.deepStrictEqual(failed, Result.fail(Option.none()))
          assert.strictEqual(yield* limiter.run(Effect.succeed(4)), 4)
        }))

      it.effect("holds back the calls after the limit", () =>
        Effect.gen(function*() {
          const limiter = yield* limiterOf(algorithm, 10)
          const fiber = yield* Effect.forkChild(Effect.replicateEffect(limiter.run(Clock.currentTimeMillis), 20))
          yield* TestClock.adjust("1 second")
          const times = yield* Fiber.join(fiber)
          expect(times.slice(0, 10).every((t) => t === 0)).toBe(true)
          expect(times.slice(10).every((t) => t > 0 && t <= 1000)).toBe(true)
        }))

      it.effect("interrupting a caller interrupts its running effect, and waits for it", () =>
        Effect.gen(function*() {
          const limiter = yield* limiterOf(algorithm, 10)
          const running = yield* Deferred.make<void>()
          const interrupted = yield* Ref.make(false)
          const fiber = yield* Effect.forkChild(
            limiter.run(
              Deferred.succeed(running, undefined).pipe(
                Effect.andThen(Effect.never),
                Effect.onInterrupt(() => Ref.set(interrupted, true))
              )
            )
          )
          yield* Deferred.await(running)
          yield* Fiber.interrupt(fiber)
          assert.isTrue(yield* Ref.get(interrupted))
        }))

      it.effect("a caller interrupted before its turn never runs its effect", () =>
        Effect.gen(function*() {
          const limiter = yield* limiterOf(algorithm, 1)
          const ran = yield* Ref.make(false)
          yield* limiter.take()
          const fiber = yield* Effect.forkChild(limiter.run(Ref.set(ran, true)))
          yield* Fiber.interrupt(fiber)
          yield* TestClock.adjust("2 seconds")
          assert.isFalse(yield* Ref.get(ran))
        }))

      it.effect("a caller that already started keeps its slot when interrupted afterwards", () =>
        Effect.gen(function*() {
          const limiter = yield* limiterOf(algorithm, 1)
          yield* limiter.take()
          const first = yield* Effect.forkChild(limiter.take())
          yield* TestClock.adjust("1 second")
          yield* Fiber.interrupt(first)
          const second = yield* Effect.forkChild(limiter.run(Clock.currentTimeMillis))
          yield* TestClock.adjust("1 second")
          assert.strictEqual(yield* Fiber.join(second), 2000)
        }))

      it.effect("interrupted callers are left out of the throttling (1,000 at once)", () =>
        Effect.gen(function*() {
          const limiter = yield* limiterOf(algorithm, 10)
          yield* Effect.replicateEffect(limiter.take(), 10)
          const queued = yield* Effect.forEach(Array.from({ length: 1000 }), () => Effect.forkChild(limiter.take()))
          // every decision made before the interruption: Effect 4 starts forked fibers later
          yield* Effect.repeat(Effect.yieldNow, { times: 5 })
          yield* Fiber.interruptAll(queued)
          const next = yield* Effect.forkChild(limiter.run(Clock.currentTimeMillis))
          yield* TestClock.adjust("1 second")
          // GCRA refills one unit 100 ms on; a window algorithm has room again at 1 s
          expect(next.pollUnsafe()).toEqual(Exit.succeed(algorithm === "gcra" ? 100 : 1000))
        }))

      it.effect("an interrupted take does not drop the units it reserved", () =>
        Effect.gen(function*() {
          const limiter = yield* limiterOf(algorithm, 10)
          yield* limiter.take()
          const heavy = yield* Effect.forkChild(limiter.take({ cost: 10 }))
          // its decision made: it sleeps on units it reserved
          yield* Effect.repeat(Effect.yieldNow, { times: 5 })
          yield* Fiber.interrupt(heavy)
          // the 9 units left now are free again: no time passes
          yield* limiter.take({ cost: 9, maxWait: 0 })
          assert.strictEqual(yield* Clock.currentTimeMillis, 0)
        }))
    })
  }

  describe("fixed window", () => {
    it.effect("charges each take's cost", () =>
      Effect.gen(function*() {
        const limiter = yield* fixedWindow("cost", 100)
        const fiber = yield* Effect.forkChild(
          Effect.replicateEffect(limiter.run(Clock.currentTimeMillis, { cost: 10 }), 20)
        )
        yield* TestClock.adjust("1 second")
        const times = yield* Fiber.join(fiber)
        expect(times).toEqual([...Array.from({ length: 10 }, () => 0), ...Array.from({ length: 10 }, () => 1000)])
      }))

    it.effect("serves in arrival order: a smaller take waits behind one that moved to the next window", () =>
      Effect.gen(function*() {
        // Effect's limiter lets the two 3s start beside the 7s ([0, 1000, 0, 1000]); sluice keeps
        // arrival order, so a later caller never starts before an earlier one
        const limiter = yield* fixedWindow("mixed", 10)
        const fibers = yield* Effect.forEach(
          [7, 7, 3, 3],
          (cost) => Effect.forkChild(limiter.run(Clock.currentTimeMillis, { cost }))
        )
        yield* TestClock.adjust("3 seconds")
        expect(yield* Effect.forEach(fibers, Fiber.join)).toEqual([0, 1000, 1000, 2000])
      }))

    it.effect("composes with another limit: 30 per minute and 2 per second", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({
          name: "composed",
          limits: [
            { limit: 30, window: "1 minute", algorithm: "fixed-window" },
            { limit: 2, window: "1 second", algorithm: "fixed-window" }
          ]
        }).pipe(Effect.provide(RateLimiterStore.layerMemory))
        const fiber = yield* Effect.forkChild(Effect.replicateEffect(limiter.run(Clock.currentTimeMillis), 32))
        yield* TestClock.adjust("1 minute")
        const expected = [
          ...Array.from({ length: 15 }, (_, s) => [s * 1000, s * 1000]).flat(),
          60_000,
          60_000
        ]
        expect(yield* Fiber.join(fiber)).toEqual(expected)
      }))
  })
})
