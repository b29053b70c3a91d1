/**
 * Usage-based limits on the memory store: costs per dimension and their errors, the books after
 * an interruption at every step of reserve → call → settle, the metrics per dimension, and the
 * limits read from `Config`.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Clock, Config, ConfigProvider, Deferred, Duration, Effect, Exit, Fiber, Logger, Metric } from "effect"
import { TestClock } from "effect/testing"
import { defectOf, uniqueName } from "./utils.js"

/** Runs `effect` with Config read from `entries`, a tree of text. */
const withConfig = (entries: Record<string, unknown>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(entries))

const llm = (name: string, store?: RateLimiterStore.Service) => {
  const options: RateLimiter.Options = {
    name,
    limits: [
      { dimension: "requests", limit: 500, window: "1 minute", burst: 10 },
      { dimension: "tokens", limit: 200_000, window: "1 minute", burst: 200_000 },
      { dimension: "tokens", limit: 2_000_000, window: "1 day", algorithm: "fixed-window" }
    ]
  }
  return store === undefined
    ? RateLimiter.make(options).pipe(Effect.provide(RateLimiterStore.layerMemory))
    : RateLimiter.make({ ...options, store })
}

describe("costs per dimension", () => {
  it.effect("a cost above what a dimension can ever hold fails at once, typed, naming it and the numbers", () =>
    Effect.gen(function*() {
      const name = uniqueName("openai")
      const limiter = yield* llm(name)
      const error = yield* Effect.flip(limiter.reserve({ cost: { requests: 1, tokens: 300_000 } }))
      assert(error._tag === "CostExceedsCapacity")
      assert.strictEqual(error.limiter, name)
      assert.isTrue(String(error).startsWith(`CostExceedsCapacity: rate limiter "${name}"`), String(error))
      assert.strictEqual(error.dimension, "tokens")
      assert.strictEqual(error.cost, 300_000)
      assert.strictEqual(error.capacity, 200_000)
      assert.strictEqual(
        error.message,
        `rate limiter "${name}": cost 300000 on dimension "tokens" exceeds what tokens: 200000 per 1min (burst 200000) can ever hold (200000); it would wait forever`
      )
      assert.isTrue(RateLimiter.isRateLimiterError(error))
      assert.strictEqual(yield* Clock.currentTimeMillis, 0)
      // nothing was consumed: the whole bucket is still there
      yield* limiter.take({ cost: { requests: 1, tokens: 200_000 }, maxWait: 0 })
    }))

  it.effect("a dimension no limit has, or a bad figure, is a defect naming the limiter and the value", () =>
    Effect.gen(function*() {
      const limiter = yield* llm("typo")
      expect(yield* defectOf(limiter.take({ cost: { requests: 1, tokns: 10 } }))).toBe(
        `rate limiter "typo": cost names the dimension "tokns", which no limit has (dimensions: "requests", "tokens")`
      )
      expect(yield* defectOf(limiter.take({ cost: { tokens: -1 } }))).toContain(
        `cost on dimension "tokens" must be an integer ≥ 0, got -1`
      )
      expect(yield* defectOf(limiter.take({ cost: { tokens: 1.5 } }))).toContain("got 1.5")
      const reservation = yield* limiter.reserve({ cost: { requests: 1, tokens: 100 } })
      expect(yield* defectOf(reservation.settle({ tokens: Number.NaN }))).toContain(
        `actual usage on dimension "tokens" must be an integer ≥ 0, got NaN`
      )
      expect(yield* defectOf(reservation.settle({ token: 1 }))).toContain(`names the dimension "token"`)
      // the bad settles changed nothing: the reservation can still be settled
      yield* reservation.settle({ tokens: 10 })
    }))

  it.effect("a limit without a dimension belongs to \"default\"; a number charges every limit", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.make({ name: "plain", limit: 10, window: "1 second", burst: 10 }).pipe(
        Effect.provide(RateLimiterStore.layerMemory)
      )
      expect(limiter.dimensions).toEqual(["default"])
      expect(limiter.limits[0].dimension).toBe("default")
      const reservation = yield* limiter.reserve({ cost: 4 })
      expect(reservation.cost).toEqual({ default: 4 })
      yield* reservation.settle(10)
      const error = yield* Effect.flip(limiter.take({ maxWait: 0 }))
      assert(error._tag === "RateLimitExceeded")
      assert.deepStrictEqual(error.retryAfter, Duration.millis(100))
    }))

  it.effect("Config reads a limit's DIMENSION", () =>
    Effect.gen(function*() {
      const settings = yield* withConfig({
        TPM: { LIMIT: "200000", WINDOW: "1 minute", BURST: "200000", DIMENSION: "tokens" }
      })(Config.nested(RateLimiter.config, "TPM"))
      assert.strictEqual(settings.dimension, "tokens")
      const limiter = yield* RateLimiter.make({ ...settings, name: "tpm" }).pipe(
        Effect.provide(RateLimiterStore.layerMemory)
      )
      expect(limiter.dimensions).toEqual(["tokens"])
    }))
})

describe("reserve → call → settle, interrupted at every step", () => {
  /**
   * The composition a caller writes (the http client does the same): a reservation waiting for
   * something else (a bulkhead, say) is released when interrupted; interrupted in the call it
   * keeps its estimate (the upstream may have counted it); the settle is uninterruptible.
   */
  const metered = (
    limiter: RateLimiter.RateLimiter,
    estimate: number,
    before: Effect.Effect<void>,
    call: Effect.Effect<number>
  ) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(limiter.reserve({ cost: { tokens: estimate } })), (reservation) =>
        Effect.andThen(
          Effect.onInterrupt(restore(before), () => Effect.orDie(reservation.release)),
          Effect.flatMap(restore(call), (actual) => reservation.settle({ tokens: actual }))
        ))
    )

  type Step = "waiting" | "reserved" | "in the call" | "settling" | "none"

  /**
   * 100 tokens a second in a bucket of 100 (10 ms a token), emptied at 0; the call reserves 60
   * (its start: 600) and uses 20. After the step, a probe of 100 tokens says how long the books
   * make it wait.
   */
  const scenario = (step: Step) =>
    Effect.gen(function*() {
      const settleGate = yield* Deferred.make<void>()
      const settling = yield* Deferred.make<void>()
      const memory = yield* RateLimiterStore.makeMemory
      // a store whose settle takes a while (a round trip), so that it can be interrupted mid-way
      const store: RateLimiterStore.Service = {
        ...memory,
        settle: (request) =>
          Effect.andThen(
            Effect.andThen(Deferred.succeed(settling, undefined), Deferred.await(settleGate)),
            memory.settle(request)
          )
      }
      const limiter = yield* RateLimiter.make({
        name: uniqueName("sweep"),
        limits: [{ dimension: "tokens", limit: 100, window: "1 second", burst: 100 }],
        store
      })
      yield* limiter.take({ cost: { tokens: 100 } })
      const gate = yield* Deferred.make<void>()
      const inCall = yield* Deferred.make<void>()
      const callGate = yield* Deferred.make<void>()
      const call = Effect.andThen(
        Effect.andThen(Deferred.succeed(inCall, undefined), Deferred.await(callGate)),
        Effect.succeed(20)
      )
      const fiber = yield* Effect.forkChild(metered(limiter, 60, Deferred.await(gate), call))
      yield* TestClock.adjust(100)
      if (step === "waiting") {
        assert.isUndefined(fiber.pollUnsafe())
        yield* Fiber.interrupt(fiber)
      } else {
        yield* TestClock.adjust(500)
        if (step === "reserved") {
          yield* Fiber.interrupt(fiber)
        } else {
          yield* Deferred.succeed(gate, undefined)
          yield* Deferred.await(inCall)
          if (step === "in the call") {
            yield* Fiber.interrupt(fiber)
          } else {
            yield* Deferred.succeed(callGate, undefined)
            yield* Deferred.await(settling)
            if (step === "settling") {
              const interrupter = yield* Effect.forkChild(Fiber.interrupt(fiber))
              yield* Deferred.succeed(settleGate, undefined)
              yield* Fiber.join(interrupter)
              const exit = yield* Fiber.await(fiber)
              // the settle ran to its end; on Effect 4 an interruption that arrives while the rest of
              // the fiber is uninterruptible leaves its exit as it was (Effect 3 ended it interrupted)
              assert.isTrue(Exit.isSuccess(exit), `the fiber ends with its settle done: ${exit}`)
            } else {
              yield* Deferred.succeed(settleGate, undefined)
              yield* Fiber.join(fiber)
            }
          }
        }
      }
      const now = yield* Clock.currentTimeMillis
      const probe = yield* Effect.forkChild(
        Effect.andThen(limiter.take({ cost: { tokens: 100 } }), Clock.currentTimeMillis)
      )
      yield* TestClock.adjust("2 seconds")
      return (yield* Fiber.join(probe)) - now
    })

  const expected: ReadonlyArray<readonly [Step, number, string]> = [
    // nothing reserved any more: the bucket refills from the first take alone (full at 1000)
    ["waiting", 900, "gives its reservation back"],
    ["reserved", 400, "releases it"],
    // 60 more tokens: full at 1600
    ["in the call", 1000, "keeps the estimate"],
    // 20 tokens: full at 1200
    ["settling", 600, "settles in full"],
    ["none", 600, "settles"]
  ]

  for (const [step, wait, what] of expected) {
    it.effect(`interrupted ${step === "none" ? "never" : step}, the call ${what}`, () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* scenario(step), wait)
      }))
  }
})

describe("metrics per dimension", () => {
  const counter = (metric: Metric.Counter<number>, name: string, dimension: string) =>
    Effect.map(Metric.value(Metric.withAttributes(metric, { name, dimension })), (state) => state.count)

  it.effect("reserved and actual units, and the estimate error, by limiter and dimension", () =>
    Effect.gen(function*() {
      const name = uniqueName("metered")
      const limiter = yield* llm(name)
      const a = yield* limiter.reserve({ cost: { requests: 1, tokens: 1000 } })
      yield* a.settle({ tokens: 1500 })
      const b = yield* limiter.reserve({ cost: { requests: 1, tokens: 1000 } })
      yield* b.settle({ tokens: 500 })
      const c = yield* limiter.reserve({ cost: { requests: 1, tokens: 1000 } })
      yield* c.release
      assert.strictEqual(yield* counter(RateLimiter.reservedUnitsTotal, name, "tokens"), 3000)
      assert.strictEqual(yield* counter(RateLimiter.reservedUnitsTotal, name, "requests"), 3)
      assert.strictEqual(yield* counter(RateLimiter.actualUnitsTotal, name, "tokens"), 2000)
      assert.strictEqual(yield* counter(RateLimiter.actualUnitsTotal, name, "requests"), 2)
      const errors = yield* Metric.value(
        Metric.withAttributes(RateLimiter.estimateErrorRatio, { name, dimension: "tokens" })
      )
      // +0.5 and −0.5; the release is not an estimate
      assert.strictEqual(errors.count, 2)
      assert.strictEqual(errors.sum, 0)
    }))
})

describe("tighten", () => {
  it.effect("what cannot be applied is ignored with a warning naming it, never thrown", () =>
    Effect.gen(function*() {
      const limiter = yield* llm("headers")
      yield* limiter.tighten([
        { dimension: "tokenz", remaining: 0 },
        { dimension: "tokens", remaining: -3 },
        { dimension: "tokens", remaining: Number.NaN },
        { dimension: "tokens" }
      ])
      // none of it applied: the whole bucket is there
      yield* limiter.take({ cost: { tokens: 200_000 }, maxWait: 0 })
    }))

  it.effect("a reset it cannot read is ignored (remaining still applies)", () =>
    Effect.gen(function*() {
      const limiter = yield* llm("reset")
      yield* limiter.tighten([{ dimension: "requests", remaining: 0, resetAfter: "soon" as Duration.Input }])
      // remaining 0 still applies (the bucket is empty), without a hold beyond it
      const error = yield* Effect.flip(limiter.take({ cost: { requests: 1 }, maxWait: 0 }))
      assert(error._tag === "RateLimitExceeded")
      assert.deepStrictEqual(error.retryAfter, Duration.millis(120))
    }))

  /** Runs `effect` with every warning logged recorded into `lines`. */
  const logged = <A, E, R>(effect: Effect.Effect<A, E, R>) => {
    const lines: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.toUpperCase()} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    })
    return Effect.map(effect.pipe(Effect.provide(Logger.layer([logger]))), () => lines)
  }

  it.effect("bad input is ignored with a warning naming the limiter, never a TypeError naming nobody", () =>
    Effect.gen(function*() {
      const limiter = yield* llm("bad-input")
      const inputs: ReadonlyArray<readonly [unknown, string]> = [
        [null, "tighten takes an array of observations, got null: ignored"],
        ["x", `tighten takes an array of observations, got "x": ignored`],
        [{ dimension: "tokens", remaining: 0 }, "tighten takes an array of observations"],
        [[null], "an observation must be a record, got null: ignored"],
        [[42], "an observation must be a record, got 42: ignored"],
        [
          [{ dimension: "requests", remaining: 0, resetAfter: -5 }],
          `resetAfter must be a finite duration ≥ 0, got -5 on dimension "requests": the reset was ignored`
        ],
        [
          [{ dimension: "requests", remaining: 0, resetAfter: Number.NaN }],
          `resetAfter must be a finite duration ≥ 0, got NaN on dimension "requests": the reset was ignored`
        ],
        [
          [{ dimension: "requests", remaining: 0, resetAfter: "-5 seconds" }],
          `resetAfter must be a finite duration ≥ 0, got "-5 seconds" on dimension "requests": the reset was ignored`
        ],
        [[{ dimension: 7, remaining: 0 }], "an observation of the unknown dimension 7 was ignored"]
      ]
      for (const [input, warning] of inputs) {
        const lines = yield* logged(limiter.tighten(input as ReadonlyArray<RateLimiter.Observation>))
        assert.strictEqual(lines.length, 1, JSON.stringify(input))
        assert.include(lines[0], `WARN rate limiter "bad-input": ${warning}`)
      }
      // no reset was read: the requests bucket (10 deep, 120 ms a request) is only emptied
      const error = yield* Effect.flip(limiter.take({ cost: { requests: 1 }, maxWait: 0 }))
      assert(error._tag === "RateLimitExceeded")
      assert.deepStrictEqual(error.retryAfter, Duration.millis(120))
      // tokens were never touched
      yield* limiter.take({ cost: { tokens: 200_000 }, maxWait: 0 })
    }))

  it.effect("a reset beyond maxResetAfter (one hour by default) is read as it, with a warning", () =>
    Effect.gen(function*() {
      const limiter = yield* llm("far-reset")
      const lines = yield* logged(limiter.tighten([{ dimension: "requests", remaining: 0, resetAfter: "87600 hours" }]))
      assert.deepStrictEqual(lines, [
        `WARN rate limiter "far-reset": resetAfter "87600 hours" on dimension "requests" is beyond maxResetAfter (3600000 ms): read as 3600000 ms`
      ])
      const held = yield* Effect.flip(limiter.take({ cost: { requests: 1 }, maxWait: 0 }))
      assert(held._tag === "RateLimitExceeded")
      assert.deepStrictEqual(held.retryAfter, Duration.hours(1))
      yield* TestClock.adjust("1 hour")
      yield* limiter.take({ cost: { requests: 1 }, maxWait: 0 })
      // with units left a reset holds nothing: bounded without a word
      assert.deepStrictEqual(
        yield* logged(limiter.tighten([{ dimension: "tokens", remaining: 5, resetAfter: "87600 hours" }])),
        []
      )
    }))

  it.effect("maxResetAfter sets the bound, from the options and from Config", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.make({
        name: "short-reset",
        limits: [{ limit: 10, window: "1 second" }],
        maxResetAfter: "5 minutes"
      }).pipe(Effect.provide(RateLimiterStore.layerMemory))
      yield* limiter.tighten([{ dimension: "default", remaining: 0, resetAfter: 999_999_999_999_999_000 }])
      const held = yield* Effect.flip(limiter.take({ maxWait: 0 }))
      assert(held._tag === "RateLimitExceeded")
      assert.deepStrictEqual(held.retryAfter, Duration.minutes(5))
      const settings = yield* withConfig({ LIMIT: "10", WINDOW: "1 second", MAX_RESET_AFTER: "10 seconds" })(
        RateLimiter.config
      )
      const configured = yield* RateLimiter.make({ name: "config-reset", ...settings }).pipe(
        Effect.provide(RateLimiterStore.layerMemory)
      )
      yield* configured.tighten([{ dimension: "default", remaining: 0, resetAfter: "1 day" }])
      const configuredHeld = yield* Effect.flip(configured.take({ maxWait: 0 }))
      assert(configuredHeld._tag === "RateLimitExceeded")
      assert.deepStrictEqual(configuredHeld.retryAfter, Duration.seconds(10))
    }))
})
