/**
 * Reserve, settle, release and tighten on Redis, against a real redis-server on the caller's clock
 * (TestClock): random sequences of them, with random estimates and actual usage, must get from the
 * Redis store exactly the answers the memory store gives, decision by decision (the scripts
 * transcribe its arithmetic, and the memory store's property test checks the guarantee of RFC 0001
 * on those very decisions).
 */
import { describe, expect, it } from "@effect/vitest"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, FastCheck, TestClock } from "effect"
import { inject } from "vitest"
import { store, uniquePrefix } from "./utils/helpers.js"

const url = inject("redisUrl")

type Spec = RateLimiterStore.LimitSpec

/** Requests and tokens per second, then a token day as a fixed window, then a sliding window. */
const shapes: ReadonlyArray<ReadonlyArray<Spec>> = [
  [
    { algorithm: "gcra", limit: 5, windowMillis: 1000, burst: 2 },
    { algorithm: "gcra", limit: 100, windowMillis: 1000, burst: 100 }
  ],
  [{ algorithm: "gcra", limit: 100, windowMillis: 1000, burst: 100 }],
  [
    { algorithm: "gcra", limit: 5, windowMillis: 1000, burst: 5 },
    { algorithm: "fixed-window", limit: 100, windowMillis: 1000, burst: 100 }
  ],
  [{ algorithm: "sliding-window", limit: 60, windowMillis: 1000, burst: 60 }]
]

const capacity = (spec: Spec) => spec.algorithm === "gcra" ? spec.burst : spec.limit

const step = FastCheck.oneof(
  {
    weight: 3,
    arbitrary: FastCheck.record({
      op: FastCheck.constant("reserve" as const),
      percent: FastCheck.array(FastCheck.integer({ min: 0, max: 100 }), { minLength: 2, maxLength: 2 }),
      maxWait: FastCheck.constantFrom(0, 300, Number.POSITIVE_INFINITY)
    })
  },
  {
    weight: 2,
    arbitrary: FastCheck.record({
      op: FastCheck.constant("settle" as const),
      which: FastCheck.nat(),
      percent: FastCheck.array(FastCheck.integer({ min: 0, max: 200 }), { minLength: 2, maxLength: 2 })
    })
  },
  { weight: 1, arbitrary: FastCheck.record({ op: FastCheck.constant("release" as const), which: FastCheck.nat() }) },
  {
    weight: 1,
    arbitrary: FastCheck.record({
      op: FastCheck.constant("tighten" as const),
      limit: FastCheck.nat(),
      percent: FastCheck.integer({ min: 0, max: 100 }),
      resetAfter: FastCheck.constantFrom(0, 250, 1500)
    })
  },
  {
    weight: 2,
    arbitrary: FastCheck.record({
      op: FastCheck.constant("wait" as const),
      millis: FastCheck.integer({ min: 0, max: 600 })
    })
  }
)

interface Open {
  readonly costs: ReadonlyArray<number>
  readonly memory: RateLimiterStore.Reserved
  readonly redis: RateLimiterStore.Reserved
  done: boolean
}

describe("usage-based limits on Redis", () => {
  it.scoped.prop(
    "decide exactly as the memory store, whatever is reserved, settled, released and tightened",
    [FastCheck.nat({ max: shapes.length - 1 }), FastCheck.array(step, { minLength: 10, maxLength: 40 })],
    ([shape, steps]) =>
      Effect.gen(function*() {
        const limits = shapes[shape]
        const memory = yield* RateLimiterStore.makeMemory
        const redis = yield* store({ url, prefix: uniquePrefix("usage"), clock: "client" })
        const key = "llm"
        const open: Array<Open> = []
        const log: Array<string> = []
        for (const s of steps) {
          log.push(JSON.stringify(s))
          switch (s.op) {
            case "reserve": {
              const costs = limits.map((spec, i) => Math.round((s.percent[i] * capacity(spec)) / 100))
              const request = { key, limits, cost: Math.max(1, ...costs), costs, maxWaitMillis: s.maxWait }
              const a = yield* memory.reserve(request)
              const b = yield* redis.reserve(request)
              expect(b._tag, log.join("\n")).toBe(a._tag)
              expect(b.delayMillis, log.join("\n")).toBeCloseTo(a.delayMillis, 6)
              if (a._tag === "Reserved" && b._tag === "Reserved") open.push({ costs, memory: a, redis: b, done: false })
              if (a._tag === "Refused" && b._tag === "Refused") expect(b.binding).toBe(a.binding)
              break
            }
            case "settle":
            case "release": {
              const live = open.filter((o) => !o.done)
              if (live.length === 0) break
              const o = live[s.which % live.length]
              o.done = true
              if (s.op === "release") {
                const refund = (store: RateLimiterStore.Service, r: RateLimiterStore.Reserved) =>
                  store.refund({
                    key,
                    limits,
                    cost: Math.max(1, ...o.costs),
                    costs: o.costs,
                    reservation: r.reservation,
                    restore: r.restore
                  })
                expect(yield* refund(redis, o.redis), log.join("\n")).toBe(yield* refund(memory, o.memory))
                break
              }
              const actual = o.costs.map((c, i) => Math.round((c * s.percent[i]) / 100))
              const settle = (store: RateLimiterStore.Service, r: RateLimiterStore.Reserved) =>
                store.settle({ key, limits, reservation: r.reservation, restore: r.restore, reserved: o.costs, actual })
              yield* settle(memory, o.memory)
              yield* settle(redis, o.redis)
              break
            }
            case "tighten": {
              const limit = s.limit % limits.length
              const request = {
                key,
                limits,
                observations: [{
                  limit,
                  remaining: Math.round((s.percent * limits[limit].limit) / 100),
                  resetAfterMillis: s.resetAfter
                }]
              }
              yield* memory.tighten(request)
              yield* redis.tighten(request)
              break
            }
            case "wait":
              yield* TestClock.adjust(s.millis)
              break
          }
        }
      }),
    { fastCheck: { numRuns: 30 }, timeout: 120_000 }
  )
})
