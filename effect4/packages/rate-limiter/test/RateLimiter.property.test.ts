/**
 * Random arrivals and costs, exact starts under TestClock, and two checks written from the
 * definitions rather than from the implementation:
 *
 * - the quota: GCRA starts satisfy the token-bucket arrival curve (any interval [x, y] holds at
 *   most burst + (y − x)/T units, so any window holds at most limit + burst), fixed-window starts
 *   never exceed the limit in an aligned window, sliding-window starts never exceed it in any
 *   window;
 * - no needless wait: a caller that did not start on arrival could not have started one
 *   millisecond earlier (without overtaking the caller before it) without breaking the quota.
 */
import { describe, expect, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Clock, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { effectProperty } from "./utils.js"

interface Run {
  readonly arrivals: ReadonlyArray<number>
  readonly costs: ReadonlyArray<number>
  readonly starts: ReadonlyArray<number>
}

const scenario = fc.record({
  limit: fc.integer({ min: 1, max: 5 }),
  interval: fc.constantFrom(50, 100, 200, 250),
  burst: fc.integer({ min: 1, max: 3 }),
  takes: fc.array(
    fc.record({ gap: fc.integer({ min: 0, max: 400 }), cost: fc.integer({ min: 1, max: 3 }) }),
    { minLength: 1, maxLength: 24 }
  )
})

type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

/** Runs the takes (arrivals strictly increasing, from 0) and returns when each started. */
const simulate = (limit: RateLimiter.Limit, takes: Scenario["takes"], maxCost: number) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter.make({ ...limit, name: "property" })
    const arrivals: Array<number> = []
    const costs: Array<number> = []
    const fibers: Array<Fiber.Fiber<number, RateLimiter.RateLimiterError>> = []
    let at = 0
    for (const take of takes) {
      at += take.gap + 1
      const cost = Math.min(take.cost, maxCost)
      yield* TestClock.setTime(at)
      arrivals.push(at)
      costs.push(cost)
      fibers.push(yield* Effect.forkChild(Effect.andThen(limiter.take({ cost }), Clock.currentTimeMillis)))
    }
    yield* TestClock.adjust("1 hour")
    const starts = yield* Effect.forEach(fibers, Fiber.join)
    return { arrivals, costs, starts } satisfies Run
  }).pipe(Effect.provide(RateLimiterStore.layerMemory))

const sum = (xs: ReadonlyArray<number>): number => xs.reduce((a, b) => a + b, 0)

/** Units of the starts in [from, to) among the first `upTo` callers. */
const unitsIn = (run: Run, from: number, to: number, upTo = run.starts.length): number => {
  let units = 0
  for (let i = 0; i < upTo; i++) if (run.starts[i] >= from && run.starts[i] < to) units += run.costs[i]
  return units
}

const expectInOrder = (run: Run) => {
  run.starts.forEach((start, i) => {
    expect(start).toBeGreaterThanOrEqual(run.arrivals[i])
    if (i > 0) expect(start).toBeGreaterThanOrEqual(run.starts[i - 1])
  })
}

/** The earliest instant caller i could have started at without overtaking caller i − 1. */
const floorOf = (run: Run, i: number): number => Math.max(run.arrivals[i], i > 0 ? run.starts[i - 1] : 0)

describe("RateLimiter properties", () => {
  it.effect(
    "gcra: starts follow the token-bucket curve (≤ limit + burst per window) and wait no longer than needed",
    () =>
      effectProperty(scenario, ({ burst, interval, limit, takes }) =>
        Effect.gen(function*() {
          const window = limit * interval
          const run = yield* simulate({ limit, window, burst }, takes, burst)
          expectInOrder(run)
          // a caller at s with the units of callers k..i: the curve from s_k to s
          const curveHolds = (i: number, start: number): boolean => {
            for (let k = 0; k <= i; k++) {
              const units = sum(run.costs.slice(k, i + 1))
              const from = k === i ? start : run.starts[k]
              if (units > burst + (start - from) / interval + 1e-9) return false
            }
            return true
          }
          for (let i = 0; i < run.starts.length; i++) {
            expect(curveHolds(i, run.starts[i])).toBe(true)
            expect(unitsIn(run, run.starts[i], run.starts[i] + window)).toBeLessThanOrEqual(limit + burst)
            const earlier = run.starts[i] - 1
            if (earlier >= floorOf(run, i)) expect(curveHolds(i, earlier)).toBe(false)
          }
        }), { numRuns: 40 }),
    60_000
  )

  it.effect(
    "fixed window: starts in an aligned window never exceed the limit, and wait no longer than needed",
    () =>
      effectProperty(scenario, ({ interval, limit, takes }) =>
        Effect.gen(function*() {
          const window = limit * interval
          const run = yield* simulate({ limit, window, algorithm: "fixed-window" }, takes, limit)
          expectInOrder(run)
          for (const start of run.starts) {
            const from = Math.floor(start / window) * window
            expect(unitsIn(run, from, from + window)).toBeLessThanOrEqual(limit)
          }
          for (let i = 0; i < run.starts.length; i++) {
            const floor = floorOf(run, i)
            if (run.starts[i] === floor) continue
            // it waited for a boundary, and every window it skipped had no room for its cost
            expect(run.starts[i] % window).toBe(0)
            for (let w = Math.floor(floor / window); w < run.starts[i] / window; w++) {
              expect(unitsIn(run, w * window, (w + 1) * window, i) + run.costs[i]).toBeGreaterThan(limit)
            }
          }
        }), { numRuns: 40 }),
    60_000
  )

  it.effect(
    "sliding window: any window holds at most the limit, and nobody waits longer than needed",
    () =>
      effectProperty(scenario, ({ interval, limit, takes }) =>
        Effect.gen(function*() {
          const window = limit * interval
          const run = yield* simulate({ limit, window, algorithm: "sliding-window" }, takes, limit)
          expectInOrder(run)
          for (const start of run.starts) {
            // the window (start − W, start]
            expect(unitsIn(run, start - window + 1e-9, start + 1e-9)).toBeLessThanOrEqual(limit)
          }
          for (let i = 0; i < run.starts.length; i++) {
            const earlier = run.starts[i] - 1
            if (earlier < floorOf(run, i)) continue
            const units = unitsIn(run, earlier - window + 1e-9, earlier + 1e-9, i) + run.costs[i]
            expect(units).toBeGreaterThan(limit)
          }
        }), { numRuns: 40 }),
    60_000
  )
})
