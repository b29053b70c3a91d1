/**
 * The store contract's vectors (`core/testing/limiterVectors.ts`) run on Effect 4: each vector
 * gets its own store, built inside the test on its `TestClock`, and every start is checked to the
 * microsecond.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import type { Layer } from "effect"
import { Clock, Duration, Effect, Exit, Fiber, Result } from "effect"
import { TestClock } from "effect/testing"
import { type Step, type Vector, vectors } from "../../../../../core/testing/limiterVectors.js"

/** A take's start: the test clock's instant in fractional milliseconds. */
const now = Clock.clockWith((clock) => Effect.succeed(Number(clock.currentTimeNanosUnsafe()) / 1_000_000))

const uniquePrefix = () => globalThis.crypto.randomUUID().slice(0, 8)

interface Limiter {
  readonly limiter: RateLimiter.RateLimiter
  /** How many decisions its store has answered. */
  readonly answered: () => number
}

/** Runs one vector on `store`: its steps in order, then checks every start. */
const run = (vector: Vector, store: RateLimiterStore.Service) =>
  Effect.gen(function*() {
    const prefix = uniquePrefix()
    const limiters: Array<Limiter> = []
    for (const [i, settings] of vector.limiters.entries()) {
      let count = 0
      const counting: RateLimiterStore.Service = {
        ...store,
        reserve: (request) => Effect.ensuring(store.reserve(request), Effect.sync(() => count++))
      }
      const limiter = yield* RateLimiter.make({
        name: `${prefix}-${settings.name ?? `l${i}`}`,
        limits: settings.limits as RateLimiter.MultiLimit["limits"],
        ...(settings.maxWait === undefined ? {} : { maxWait: settings.maxWait }),
        store: counting
      })
      limiters.push({ limiter, answered: () => count })
    }
    const on = (step: { readonly on?: number }) => limiters[step.on ?? 0]
    const takers = new Map<string, Fiber.Fiber<number, RateLimiter.RateLimiterError>>()
    const gone = new Set<string>()
    const reservations = new Map<string, RateLimiter.Reservation>()
    const options = (
      step: { readonly cost?: RateLimiter.Cost; readonly maxWait?: number }
    ): RateLimiter.TakeOptions => ({
      ...(step.cost === undefined ? {} : { cost: step.cost }),
      ...(step.maxWait === undefined ? {} : { maxWait: step.maxWait })
    })
    const refusedNow = (limiter: RateLimiter.RateLimiter, take: RateLimiter.TakeOptions) =>
      Effect.map(Effect.result(limiter.take(take)), (result) => {
        if (Result.isSuccess(result)) return undefined
        const error = result.failure
        assert(error._tag === "RateLimitExceeded", String(error))
        return error
      })

    const stepOf = (step: Step): Effect.Effect<void, RateLimiter.RateLimiterError> => {
      switch (step.do) {
        case "take": {
          const { answered, limiter } = on(step)
          return Effect.gen(function*() {
            const before = answered()
            takers.set(step.id, yield* Effect.forkChild(Effect.andThen(limiter.take(options(step)), now)))
            // the decision is back before the next step, so that arrival order is step order
            for (let turn = 0; answered() === before; turn++) {
              if (turn > 1_000) return yield* Effect.die(`take ${step.id} was never decided`)
              yield* Effect.yieldNow
            }
          })
        }
        case "adjust":
          return TestClock.adjust(step.millis)
        case "setTime":
          return TestClock.setTime(step.millis)
        case "interrupt": {
          const fiber = takers.get(step.id)
          if (fiber === undefined) return Effect.die(`no taker ${step.id}`)
          return Effect.gen(function*() {
            yield* Fiber.interrupt(fiber)
            // a taker that had already started keeps its start
            if (!Exit.isSuccess(yield* Fiber.await(fiber))) gone.add(step.id)
          })
        }
        case "pause":
          return on(step).limiter.pauseFor(step.millis)
        case "pauseRemaining":
          return Effect.map(on(step).limiter.pauseRemaining, (left) => {
            assert.strictEqual(Duration.toMillis(left), step.millis, "pause remaining")
          })
        case "refused":
          return Effect.gen(function*() {
            const before = yield* now
            const error = yield* refusedNow(on(step).limiter, options(step))
            assert(error !== undefined, "the take started")
            assert.strictEqual(yield* now, before, "a refusal is at once")
            assert.strictEqual(error.reason, step.reason)
            if (step.retryAfterMillis !== undefined) {
              assert.strictEqual(Duration.toMillis(error.retryAfter), step.retryAfterMillis, error.message)
            }
            if (step.algorithm !== undefined) assert.strictEqual(error.limit?.algorithm, step.algorithm)
            if (step.reason === "paused") assert.strictEqual(error.limit, undefined)
            if (step.errorCost !== undefined) assert.strictEqual(error.cost, step.errorCost)
            assert.isTrue(String(error).startsWith("RateLimitExceeded: rate limiter "), String(error))
          })
        case "waits":
          return Effect.map(refusedNow(on(step).limiter, { cost: step.cost, maxWait: 0 }), (error) => {
            assert.strictEqual(error === undefined ? 0 : Duration.toMillis(error.retryAfter), step.millis, "wait")
          })
        case "fits":
          return Effect.map(refusedNow(on(step).limiter, { cost: step.cost, maxWait: 0 }), (error) => {
            assert.strictEqual(error === undefined, step.fits, `a take of ${JSON.stringify(step.cost)} fits now`)
          })
        case "reserve":
          return Effect.map(on(step).limiter.reserve({ cost: step.cost }), (reservation) => {
            reservations.set(step.id, reservation)
          })
        case "settle":
        case "release": {
          const reservation = reservations.get(step.id)
          if (reservation === undefined) return Effect.die(`no reservation ${step.id}`)
          return step.do === "settle" ? reservation.settle(step.actual) : reservation.release
        }
        case "tighten":
          return on(step).limiter.tighten(step.observations)
      }
    }

    for (const step of vector.steps) yield* stepOf(step)
    const starts: Record<string, number> = {}
    for (const [id, fiber] of takers) {
      if (!gone.has(id)) starts[id] = yield* Fiber.join(fiber)
    }
    expect(Object.keys(starts).sort()).toEqual(Object.keys(vector.starts).sort())
    for (const [id, at] of Object.entries(vector.starts)) {
      expect(starts[id], `start of ${id}`).toBeCloseTo(at, 3)
    }
  })

/**
 * @param label shown in the suite's name
 * @param layer the store under test, built once per test
 */
export const storeVectors = <E>(label: string, layer: Layer.Layer<RateLimiterStore.RateLimiterStore, E>): void => {
  describe(`RateLimiterStore contract vectors: ${label}`, () => {
    for (const group of new Set(vectors.map((v) => v.group))) {
      describe(group, () => {
        for (const vector of vectors.filter((v) => v.group === group)) {
          it.effect(
            vector.name,
            () =>
              Effect.flatMap(RateLimiterStore.RateLimiterStore, (store) => run(vector, store)).pipe(
                Effect.provide(layer)
              )
          )
        }
      })
    }
  })
}
