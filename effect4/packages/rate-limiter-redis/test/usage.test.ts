/**
 * Reserve, settle and tighten on the server's `TIME`, across connections (each store is one
 * process's connection): what one process settles or learns from headers, every process pays.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import type * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import { Effect } from "effect"
import { inject } from "vitest"
import { store, uniquePrefix } from "./utils.js"

const url = inject("redisUrl")

/** Requests 10/s (burst 10) and tokens 1,000/s (burst 1,000): T = 1 ms per token. */
const limits: ReadonlyArray<RateLimiterStore.LimitSpec> = [
  { algorithm: "gcra", limit: 10, windowMillis: 1000, burst: 10 },
  { algorithm: "gcra", limit: 1000, windowMillis: 1000, burst: 1000 }
]
const tokensOnly: ReadonlyArray<RateLimiterStore.LimitSpec> = [limits[1]]

const reserve = (
  s: RateLimiterStore.Service,
  costs: ReadonlyArray<number>,
  maxWaitMillis = Number.POSITIVE_INFINITY,
  on: ReadonlyArray<RateLimiterStore.LimitSpec> = limits
) =>
  Effect.flatMap(s.reserve({ key: "llm", limits: on, cost: Math.max(...costs), costs, maxWaitMillis }), (result) => {
    assert(result._tag === "Reserved", `expected a reservation, got ${JSON.stringify(result)}`)
    return Effect.succeed(result)
  })

const twoProcesses = Effect.gen(function*() {
  const prefix = uniquePrefix("usage")
  return [yield* store({ url, prefix }), yield* store({ url, prefix })] as const
})

describe("usage-based limits on the server's TIME", () => {
  it.live("a debt settled by one process delays the next start of another", () =>
    Effect.gen(function*() {
      const [one, two] = yield* twoProcesses
      const a = yield* reserve(one, [1, 500])
      // 500 tokens estimated, 900 used: the schedule moves 400 ms further
      yield* one.settle({
        key: "llm",
        limits,
        reservation: a.reservation,
        restore: a.restore,
        reserved: [1, 500],
        actual: [1, 900]
      })
      const b = yield* reserve(two, [1, 600])
      // tat = t0 + 900 ms; 600 tokens fit when tat − 400 ms has passed: 500 ms after t0 (less the
      // time between the calls; without the debt, 100 ms)
      expect(b.delayMillis).toBeGreaterThan(300)
      expect(b.delayMillis).toBeLessThanOrEqual(500)
    }).pipe(Effect.scoped))

  it.live("unused tokens come back for every process, only down to the start", () =>
    Effect.gen(function*() {
      const [one, two] = yield* twoProcesses
      const a = yield* reserve(one, [1, 900])
      yield* one.settle({
        key: "llm",
        limits,
        reservation: a.reservation,
        restore: a.restore,
        reserved: [1, 900],
        actual: [1, 100]
      })
      // 800 tokens back: the whole bucket is available 100 ms after the first start
      const b = yield* reserve(two, [1, 1000])
      expect(b.delayMillis).toBeLessThanOrEqual(100)
    }).pipe(Effect.scoped))

  it.live("a single GCRA limit's immediate start gives back too (its short reply carries the charged total)", () =>
    Effect.gen(function*() {
      const [one, two] = yield* twoProcesses
      const a = yield* reserve(one, [900], Number.POSITIVE_INFINITY, tokensOnly)
      assert.strictEqual(a.delayMillis, 0)
      yield* one.settle({
        key: "llm",
        limits: tokensOnly,
        reservation: a.reservation,
        restore: a.restore,
        reserved: [900],
        actual: [100]
      })
      const b = yield* reserve(two, [1000], Number.POSITIVE_INFINITY, tokensOnly)
      expect(b.delayMillis).toBeLessThanOrEqual(100)
      // without restore nothing comes back (the limiter never sends a second settle)
      yield* one.settle({
        key: "llm",
        limits: tokensOnly,
        reservation: a.reservation,
        restore: undefined,
        reserved: [900],
        actual: [0]
      })
      const c = yield* reserve(two, [1000], Number.POSITIVE_INFINITY, tokensOnly)
      expect(c.delayMillis).toBeGreaterThan(900)
    }).pipe(Effect.scoped))

  it.live("remaining 0 from one process's headers holds the tokens of every process until the reset", () =>
    Effect.gen(function*() {
      const [one, two] = yield* twoProcesses
      yield* one.tighten({ key: "llm", limits, observations: [{ limit: 1, remaining: 0, resetAfterMillis: 2000 }] })
      const refused = yield* two.reserve({ key: "llm", limits, cost: 100, costs: [1, 100], maxWaitMillis: 0 })
      assert(refused._tag === "Refused")
      assert.strictEqual(refused.binding, 1, "the token limit binds")
      expect(refused.delayMillis).toBeGreaterThan(1500)
      expect(refused.delayMillis).toBeLessThanOrEqual(2000)
      // a start that costs no tokens does not wait for them
      const requestsOnly = yield* reserve(two, [1, 0], 0)
      assert.strictEqual(requestsOnly.delayMillis, 0)
    }).pipe(Effect.scoped))

  it.live("remaining from headers moves the state down, never up", () =>
    Effect.gen(function*() {
      const [one, two] = yield* twoProcesses
      // the upstream says 300 tokens are left: 700 are charged as if just used
      yield* one.tighten({ key: "llm", limits, observations: [{ limit: 1, remaining: 300, resetAfterMillis: 0 }] })
      const a = yield* reserve(two, [1, 700])
      // 400 ms after the tighten (less the time between the calls); without it, at once
      expect(a.delayMillis).toBeGreaterThan(200)
      expect(a.delayMillis).toBeLessThanOrEqual(400)
      // a looser figure changes nothing
      yield* two.tighten({ key: "llm", limits, observations: [{ limit: 1, remaining: 1000, resetAfterMillis: 0 }] })
      const b = yield* two.reserve({ key: "llm", limits, cost: 500, costs: [1, 500], maxWaitMillis: 0 })
      assert.strictEqual(b._tag, "Refused")
    }).pipe(Effect.scoped))
})
