/**
 * The guarantee of usage-based limits, checked from its definition (docs/semantics.md, "Usage-based
 * limits") over random arrivals, estimates, actual usages, call durations, releases and
 * interruptions, on the memory store under TestClock. For every window `w` of the limit:
 *
 *   Σ actual usage of the calls started in w  ≤  L + B + Σ_{c started in w, in flight at D_w} (actual_c − estimate_c)⁺
 *
 * where `D_w` is the decision of the start in `w` decided last, `B` is the burst for GCRA (any
 * interval of length W) and 0 for the windows (each aligned window for a fixed window, any window
 * for a sliding one). A call interrupted in flight keeps its estimate (the upstream may have
 * counted it), so its actual usage is its estimate; a released call used nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Clock, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { effectProperty } from "./utils.js"

const WINDOW = 1000

const scenario = fc.record({
  algorithm: fc.constantFrom(...(["gcra", "fixed-window", "sliding-window"] as const)),
  limit: fc.integer({ min: 2, max: 12 }),
  burst: fc.integer({ min: 1, max: 12 }),
  calls: fc.array(
    fc.record({
      gap: fc.integer({ min: 0, max: 400 }),
      estimate: fc.integer({ min: 1, max: 12 }),
      /** a multiple of the estimate, in quarters: 0 (used nothing) to 3× */
      usage: fc.integer({ min: 0, max: 12 }),
      duration: fc.integer({ min: 0, max: 3000 }),
      ending: fc.constantFrom(...(["settle", "settle", "settle", "release", "interrupt"] as const)),
      /** for "interrupt": after how many more arrivals */
      after: fc.integer({ min: 0, max: 3 })
    }),
    { minLength: 1, maxLength: 30 }
  )
})

interface Call {
  readonly estimate: number
  /** What the upstream counted: the settled usage, 0 when released, the estimate when interrupted in flight. */
  actual: number
  start: number | undefined
  decidedSeq: number
  /** When its usage reached the store; Infinity while it has not (or never will). */
  settledSeq: number
  /** Settled or released. */
  done: boolean
}

type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

/** Runs the calls and checks every window. */
export const run = ({ algorithm, burst: burstInput, calls: events, limit }: Scenario) =>
  Effect.gen(function*() {
    const burst = algorithm === "gcra" ? Math.min(burstInput, limit) : limit
    const capacity = algorithm === "gcra" ? burst : limit
    const memory = yield* RateLimiterStore.makeMemory
    let seq = 0
    const current = new Map<unknown, Call>()
    // Numbers each decision and each settle in the order the store sees them.
    const store: RateLimiterStore.Service = {
      ...memory,
      reserve: (request) =>
        Effect.withFiber((fiber) => {
          const call = current.get(fiber)
          if (call !== undefined) call.decidedSeq = seq++
          return memory.reserve(request)
        }),
      settle: (request) =>
        Effect.withFiber((fiber) => {
          const call = current.get(fiber)
          if (call !== undefined) call.settledSeq = seq++
          return memory.settle(request)
        })
    }
    const limiter = yield* RateLimiter.make({
      name: "usage-property",
      limits: [
        algorithm === "gcra"
          ? { dimension: "tokens", limit, window: WINDOW, burst }
          : { dimension: "tokens", limit, window: WINDOW, algorithm }
      ],
      store
    })
    const calls: Array<Call> = []
    const fibers: Array<Fiber.Fiber<void, RateLimiter.RateLimiterError>> = []
    const interruptAt = new Map<number, Array<number>>()
    for (let i = 0; i < events.length; i++) {
      const event = events[i]
      yield* TestClock.adjust(event.gap)
      for (const j of interruptAt.get(i) ?? []) yield* Fiber.interrupt(fibers[j])
      const estimate = Math.min(event.estimate, capacity)
      const used = Math.round((estimate * event.usage) / 4)
      const call: Call = {
        estimate,
        actual: estimate,
        start: undefined,
        decidedSeq: -1,
        settledSeq: Infinity,
        done: false
      }
      calls.push(call)
      const body = Effect.gen(function*() {
        const reservation = yield* limiter.reserve({ cost: { tokens: estimate } })
        call.start = yield* Clock.currentTimeMillis
        yield* Effect.sleep(event.duration)
        if (event.ending === "release") {
          call.actual = 0
          yield* reservation.release
        } else {
          call.actual = used
          yield* reservation.settle({ tokens: used })
        }
        call.done = true
      })
      const fiber = yield* Effect.forkChild(body)
      current.set(fiber, call)
      fibers.push(fiber)
      // let it decide (and start, if it may) before anything else happens
      yield* TestClock.adjust(0)
      if (event.ending === "interrupt") {
        const at = i + event.after
        if (at >= events.length) continue
        interruptAt.set(at + 1, [...(interruptAt.get(at + 1) ?? []), i])
      }
    }
    yield* TestClock.adjust("10 minutes")
    for (const fiber of fibers) yield* Fiber.await(fiber)
    // interrupted in flight: kept at the estimate; interrupted before it settled: the same
    for (const call of calls) {
      if (call.start !== undefined && !call.done) call.actual = call.estimate
    }

    const started = calls.filter((call): call is Call & { start: number } => call.start !== undefined)
    const check = (inWindow: (at: number) => boolean, slack: number, label: string) => {
      const members = started.filter((call) => inWindow(call.start))
      if (members.length === 0) return
      const last = Math.max(...members.map((call) => call.decidedSeq))
      const usage = members.reduce((sum, call) => sum + call.actual, 0)
      const inFlight = members.reduce(
        (sum, call) => call.settledSeq > last ? sum + Math.max(0, call.actual - call.estimate) : sum,
        0
      )
      expect(usage, `${algorithm} ${label}: ${JSON.stringify(members)}`).toBeLessThanOrEqual(
        limit + slack + inFlight
      )
    }
    for (const { start } of started) {
      if (algorithm === "gcra") {
        check((at) => at >= start && at < start + WINDOW, burst, `[${start}, ${start + WINDOW})`)
      } else if (algorithm === "fixed-window") {
        const from = Math.floor(start / WINDOW) * WINDOW
        check((at) => at >= from && at < from + WINDOW, 0, `[${from}, ${from + WINDOW})`)
      } else {
        check((at) => at > start - WINDOW && at <= start, 0, `(${start - WINDOW}, ${start}]`)
      }
    }
  })

describe("usage-based limits: the guarantee per window", () => {
  it.effect(
    "usage started in any window ≤ limit + burst + the under-estimates of the calls in flight at its last decision",
    () => effectProperty(scenario, run, { numRuns: 60 }),
    120_000
  )
})
