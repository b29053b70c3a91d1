/**
 * The store contract's vectors (`core/testing/limiterVectors.ts`) run on Effect 4: each vector
 * gets its own store, built inside the test on its `TestClock`, and every start is checked to the
 * microsecond.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import type { Layer } from "effect"
import { Clock, Duration, Effect, Exit, Fiber, Logger, Result } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import {
  cancellationVectors,
  type Step,
  type StoreVector,
  storeVectors as storeInterfaceVectors,
  type Vector,
  vectors
} from "../../../../../core/testing/limiterVectors.js"
import { effectProperty } from "../utils.js"

/** A take's start: the test clock's instant in fractional milliseconds. */
const now = Clock.clockWith((clock) => Effect.succeed(Number(clock.currentTimeNanosUnsafe()) / 1_000_000))

const uniquePrefix = () => globalThis.crypto.randomUUID().slice(0, 8)

/** One real turn of the event loop, whatever the clock: lets network replies arrive. */
const ioTurn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/**
 * Waits until `done` holds: a few fiber yields (a memory store answers within them), then real
 * event-loop turns (a remote store answers over the network), at most ~10 s of them.
 */
const until = (done: () => boolean, what: () => string) =>
  Effect.gen(function*() {
    for (let turn = 0; !done(); turn++) {
      if (turn > 100_000) return yield* Effect.die(what())
      yield* turn < 10 ? Effect.yieldNow : ioTurn
    }
  })

/** A store that counts the decisions it answered. */
const counting = (store: RateLimiterStore.Service) => {
  let count = 0
  const service: RateLimiterStore.Service = {
    ...store,
    reserve: (request) => Effect.ensuring(store.reserve(request), Effect.sync(() => count++))
  }
  return { service, answered: () => count }
}

/**
 * Forks a take now and returns once its decision is back: a remote store answers over the
 * network, and `TestClock.adjust` only waits for fibers to suspend (a fiber awaiting a reply
 * counts as suspended), so arrival order is step order only this way.
 */
const forkDecided = <A>(
  { answered }: { readonly answered: () => number },
  id: string,
  effect: Effect.Effect<A, RateLimiter.RateLimiterError>
) =>
  Effect.gen(function*() {
    const before = answered()
    const fiber = yield* Effect.forkChild(effect)
    yield* until(() => answered() > before, () => `take ${id} was never decided`)
    return fiber
  })

interface Limiter {
  readonly name: string
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
      const { answered, service } = counting(store)
      const name = `${prefix}-${settings.name ?? `l${i}`}`
      const limiter = yield* RateLimiter.make({
        name,
        limits: settings.limits as RateLimiter.MultiLimit["limits"],
        ...(settings.maxWait === undefined ? {} : { maxWait: settings.maxWait }),
        store: service
      })
      limiters.push({ name, limiter, answered })
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
          const limiter = on(step)
          return Effect.map(
            forkDecided(limiter, step.id, Effect.andThen(limiter.limiter.take(options(step)), now)),
            (fiber) => {
              takers.set(step.id, fiber)
            }
          )
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
            const { limiter, name } = on(step)
            const before = yield* now
            const error = yield* refusedNow(limiter, options(step))
            assert(error !== undefined, "the take started")
            assert.strictEqual(yield* now, before, "a refusal is at once")
            assert.strictEqual(error.reason, step.reason)
            assert.strictEqual(error.limiter, name)
            if (step.retryAfterMillis !== undefined) {
              assert.strictEqual(Duration.toMillis(error.retryAfter), step.retryAfterMillis, error.message)
            }
            if (step.algorithm !== undefined) assert.strictEqual(error.limit?.algorithm, step.algorithm)
            if (step.reason === "paused") assert.strictEqual(error.limit, undefined)
            if (step.errorCost !== undefined) assert.strictEqual(error.cost, step.errorCost)
            if (step.message !== undefined) {
              assert.strictEqual(error.message, `rate limiter ${JSON.stringify(name)}: ${step.message}`)
            }
            assert.strictEqual(error.name, "RateLimitExceeded")
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
        case "dimensions":
          return Effect.sync(() => {
            expect(on(step).limiter.dimensions).toEqual(step.expect)
          })
      }
    }

    for (const step of vector.steps) yield* stepOf(step)
    // polled, not joined: a taker still held (say for a slot lost) fails here, it does not hang
    const starts: Record<string, number> = {}
    for (const [id, fiber] of takers) {
      if (gone.has(id)) continue
      yield* until(() => fiber.pollUnsafe() !== undefined, () => `${id} is still waiting`)
      const exit = fiber.pollUnsafe()
      assert(exit !== undefined && Exit.isSuccess(exit), `${id} failed: ${exit}`)
      starts[id] = exit.value
    }
    expect(Object.keys(starts).sort()).toEqual(Object.keys(vector.starts).sort())
    for (const [id, at] of Object.entries(vector.starts)) {
      expect(starts[id], `start of ${id}`).toBeCloseTo(at, 3)
    }
  })

/** Runs a vector of the store's own interface on `store`, on one key of its own. */
const runStore = (vector: StoreVector, store: RateLimiterStore.Service) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(vector.startAt)
    const key = `raw-${uniquePrefix()}`
    const limits = vector.limits
    const reserved = new Map<string, RateLimiterStore.Reserved>()
    for (const step of vector.steps) {
      switch (step.do) {
        case "reserve": {
          const result = yield* store.reserve({
            key,
            limits,
            cost: step.cost,
            ...(step.costs === undefined ? {} : { costs: step.costs }),
            maxWaitMillis: step.maxWaitMillis
          })
          const { delayAtLeast, ...fields } = step.expect as typeof step.expect & { delayAtLeast?: number }
          expect(result).toMatchObject(Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)))
          if (delayAtLeast !== undefined) expect(result.delayMillis).toBeGreaterThan(delayAtLeast)
          if (step.id !== undefined && result._tag === "Reserved") reserved.set(step.id, result)
          break
        }
        case "refund": {
          const r = reserved.get(step.id)
          assert(r !== undefined)
          const refunded = yield* store.refund({
            key,
            limits,
            cost: step.cost,
            reservation: r.reservation,
            restore: r.restore
          })
          assert.strictEqual(refunded, step.expect, `refund ${step.id}`)
          break
        }
        case "settle": {
          const r = reserved.get(step.id)
          assert(r !== undefined)
          yield* store.settle({
            key,
            limits,
            reservation: r.reservation,
            restore: r.restore,
            reserved: step.reserved,
            actual: step.actual
          })
          break
        }
        case "tighten": {
          const lines: Array<string> = []
          const logger = Logger.make(({ message }) => {
            lines.push(Array.isArray(message) ? message.join(" ") : String(message))
          })
          yield* store.tighten({
            key,
            limits,
            observations: step.observations as ReadonlyArray<RateLimiterStore.Observation>
          }).pipe(Effect.provide(Logger.layer([logger])))
          if (step.warns === undefined) assert.deepStrictEqual(lines, [])
          else {
            assert.strictEqual(lines.length, 1)
            assert.include(lines[0], `tighten of ${JSON.stringify(key)}`)
            for (const text of step.warns) assert.include(lines[0], text)
          }
          break
        }
        case "pause":
          yield* store.pause(key, step.millis)
          break
        case "readPause":
          assert.strictEqual(yield* store.readPause(key), step.expect)
          break
        case "adjust":
          yield* TestClock.adjust(step.millis)
          break
      }
    }
  })

const arrivals = fc.record({
  algorithm: fc.constantFrom(...(["gcra", "fixed-window", "sliding-window"] as const)),
  limit: fc.integer({ min: 1, max: 4 }),
  burst: fc.integer({ min: 1, max: 3 }),
  events: fc.array(
    fc.record({
      gap: fc.integer({ min: 0, max: 300 }),
      cost: fc.integer({ min: 1, max: 2 }),
      interrupt: fc.option(fc.nat(), { nil: undefined })
    }),
    { minLength: 1, maxLength: 30 }
  )
})

/** Takers arriving at random and interrupted at random: no window holds more than its quota. */
const quotaHolds = (
  { algorithm, burst: burstInput, events, limit }: typeof arrivals extends fc.Arbitrary<infer A> ? A : never,
  store: RateLimiterStore.Service
) =>
  Effect.gen(function*() {
    const window = 1000
    const burst = algorithm === "gcra" ? Math.min(burstInput, limit) : limit
    const decided = counting(store)
    const limiter = yield* RateLimiter.make({
      name: `quota-${uniquePrefix()}`,
      ...(algorithm === "gcra" ? { limit, window, burst } : { limit, window, algorithm }),
      store: decided.service
    })
    const started: Array<{ readonly at: number; readonly cost: number }> = []
    const fibers: Array<Fiber.Fiber<void, RateLimiter.RateLimiterError>> = []
    const maxCost = Math.min(burst, limit)
    for (const [i, event] of events.entries()) {
      yield* TestClock.adjust(event.gap)
      const cost = Math.min(event.cost, maxCost)
      fibers.push(
        yield* forkDecided(
          decided,
          `t${i}`,
          Effect.flatMap(limiter.take({ cost }), () =>
            Effect.map(now, (at) => {
              started.push({ at, cost })
            }))
        )
      )
      if (event.interrupt !== undefined) yield* Fiber.interrupt(fibers[event.interrupt % fibers.length])
    }
    yield* TestClock.adjust("1 minute")
    yield* Effect.forEach(fibers, Fiber.await, { discard: true })
    const unitsIn = (from: number, to: number) =>
      started.reduce((units, s) => s.at >= from && s.at < to ? units + s.cost : units, 0)
    for (const { at } of started) {
      if (algorithm === "fixed-window") {
        const from = Math.floor(at / window) * window
        expect(unitsIn(from, from + window)).toBeLessThanOrEqual(limit)
      } else if (algorithm === "sliding-window") {
        expect(unitsIn(at - window + 1e-6, at + 1e-6)).toBeLessThanOrEqual(limit)
      } else {
        expect(unitsIn(at, at + window)).toBeLessThanOrEqual(limit + burst)
      }
    }
  })

/**
 * @param label shown in the suite's name
 * @param layer the store under test, built once per test
 */
export const storeVectors = <E>(label: string, layer: Layer.Layer<RateLimiterStore.RateLimiterStore, E>): void => {
  describe(`RateLimiterStore contract vectors: ${label}`, () => {
    const all = [...vectors, ...cancellationVectors]
    for (const group of new Set(all.map((v) => v.group))) {
      describe(group, () => {
        for (const vector of all.filter((v) => v.group === group)) {
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
    it.effect("no window ever holds more than its quota, whatever arrives and is interrupted", () =>
      effectProperty(
        arrivals,
        (input) =>
          Effect.flatMap(RateLimiterStore.RateLimiterStore, (store) => quotaHolds(input, store)).pipe(
            Effect.provide(layer)
          ),
        { numRuns: 30 }
      ), 120_000)
    describe("the store interface", () => {
      for (const vector of storeInterfaceVectors) {
        it.effect(
          vector.name,
          () =>
            Effect.flatMap(RateLimiterStore.RateLimiterStore, (store) => runStore(vector, store)).pipe(
              Effect.provide(layer)
            )
        )
      }
    })
  })
}
