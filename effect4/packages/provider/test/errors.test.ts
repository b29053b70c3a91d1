import { assert, describe, it } from "@effect/vitest"
import { Provider, ProviderError } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Config, ConfigProvider, Deferred, Duration, Effect, Exit, Fiber, Layer } from "effect"
import { uniqueName, yieldTurns } from "./utils.js"

/** A store that never decides: every take fails as Redis out of reach would make it fail. */
const storeDown = Layer.succeed(RateLimiterStore.RateLimiterStore, {
  reserve: () => Effect.fail(new RateLimiterStore.RateLimiterStoreError({ message: "store down" })),
  refund: () => Effect.succeed(false),
  settle: () => Effect.void,
  tighten: () => Effect.void,
  pause: () => Effect.void,
  readPause: () => Effect.succeed(0)
})

describe("one import gives every error of a provider, as values", () => {
  it.effect("the bulkhead's and the limiter's errors are provider errors, and instanceof works on them", () =>
    Effect.gen(function*() {
      const limiter = yield* Provider.make({
        name: uniqueName("errors-limiter"),
        bulkhead: { permits: 1 },
        rateLimiter: { limit: 1, window: "1 minute", maxWait: 0 }
      })
      yield* limiter.call(Effect.void)
      const limited = yield* Effect.flip(limiter.call(Effect.void))
      assert.isTrue(limited instanceof Provider.RateLimitExceeded)
      assert.isTrue(Provider.isProviderError(limited))
      const provider = yield* Provider.make({ name: uniqueName("errors"), bulkhead: { permits: 1, maxWaiting: 0 } })
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(provider.call(Deferred.await(gate)))
      yield* yieldTurns()
      const full = yield* Effect.flip(provider.call(Effect.void))
      assert.isTrue(full instanceof Provider.BulkheadFull)
      assert.isTrue(full instanceof ProviderError.BulkheadFull)
      assert.isTrue(Provider.isProviderError(full))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      const store = new Provider.RateLimiterStoreError({ message: "down" })
      assert.isTrue(Provider.isProviderError(store))
      assert.isTrue(ProviderError.isProviderError(store))
      assert.isFalse(Provider.isProviderError(new Error("not ours")))
      assert.isFalse(Provider.isProviderError({ _tag: "CallTimeout" }))
    }).pipe(Effect.provide(RateLimiterStore.layerMemory)))

  it.effect("a permit wait past maxWait is a Provider.PermitWaitTimeout", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({ name: uniqueName("pwt"), bulkhead: { permits: 1, maxWait: 0 } })
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(provider.call(Deferred.await(gate)))
      yield* yieldTurns()
      const error = yield* Effect.flip(provider.call(Effect.void))
      assert.isTrue(error instanceof Provider.PermitWaitTimeout)
      assert.isTrue(Provider.isProviderError(error))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
    }))

  it("RetryBudgetExhausted counts retries in English", () => {
    const error = new Provider.RetryBudgetExhausted({
      budget: "p",
      provider: "p",
      attempt: 2,
      retries: 3,
      firstAttempts: 1,
      allowed: 3,
      window: Duration.seconds(10),
      lastError: undefined
    })
    assert.include(error.message, "3 retries against 1 first attempt")
    assert.notInclude(error.message, "retrys")
  })

  it.effect("messages print NaN and Infinity by name, not as null", () =>
    Effect.gen(function*() {
      for (const [maxAttempts, shown] of [[Number.NaN, "NaN"], [Infinity, "Infinity"]] as const) {
        const exit = yield* Effect.exit(
          Provider.make({ name: "bad", bulkhead: { permits: 1 }, retry: { maxAttempts } }).pipe(Effect.scoped)
        )
        assert.isTrue(Exit.isFailure(exit))
        assert.include(
          String(Exit.isFailure(exit) ? exit.cause : ""),
          `retry.maxAttempts must be an integer ≥ 1, got ${shown}`
        )
      }
    }))
})

describe("a store outage has its own verdict", () => {
  it("the verdict reads store when attempts fail with RateLimiterStoreError", () => {
    const idle = { count: 0, meanMillis: 0, p95Millis: 0 }
    const verdict = Provider.verdict({
      attempts: 20,
      upstreamErrors: 0,
      storeErrors: 20,
      permitWait: { count: 20, meanMillis: 5, p95Millis: 9 },
      limiterWait: idle,
      callTime: idle
    })
    assert.strictEqual(verdict.binding, "store")
    assert.include(verdict.reason, "20 of 20 attempts")
  })

  it.effect("every call failing on the store, nothing reaching the upstream: store, not bulkhead", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("store-down"),
        bulkhead: { permits: 1 },
        rateLimiter: { limit: 10, window: "1 second" }
      })
      let reached = 0
      const calls = Array.from({ length: 8 }, () => provider.call(Effect.sync(() => reached++)).pipe(Effect.flip))
      const errors = yield* Effect.all(calls, { concurrency: "unbounded" })
      assert.isTrue(errors.every((e) => e._tag === "RateLimiterStoreError"))
      assert.strictEqual(reached, 0)
      const stats = yield* provider.stats
      assert.strictEqual(stats.storeErrors, 8)
      assert.strictEqual(stats.outcomes.store_error, 8)
      assert.strictEqual(stats.verdict.binding, "store")
    }).pipe(Effect.provide(storeDown)))
})

const fromEnv = (env: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

describe("Provider.config: a section set in part is an error, never a bound silently dropped", () => {
  it.effect("RATE_LIMIT_LIMIT without RATE_LIMIT_WINDOW (missing or misspelt) names the missing key", () =>
    Effect.gen(function*() {
      for (const env of [{ P_RATE_LIMIT_LIMIT: "5" }, { P_RATE_LIMIT_LIMIT: "5", P_RATE_LIMIT_WINDOWS: "1 second" }]) {
        const error = yield* Effect.flip(
          fromEnv({ P_BULKHEAD_PERMITS: "2", ...env })(Config.nested(Provider.config, "P"))
        )
        // the path as Effect 4 renders it: the environment's "_" split into segments
        assert.include(String(error), `WINDOW is missing while LIMIT is set`, JSON.stringify(env))
        assert.include(String(error), `["P"]["RATE"]["LIMIT"]["WINDOW"]`, JSON.stringify(env))
      }
    }))

  it.effect("a wholly absent section means not configured; a whole one is read", () =>
    Effect.gen(function*() {
      const none = yield* fromEnv({ P_BULKHEAD_PERMITS: "2" })(Config.nested(Provider.config, "P"))
      assert.isUndefined(none.rateLimiter)
      assert.isUndefined(none.retry)
      const some = yield* fromEnv({
        P_BULKHEAD_PERMITS: "2",
        P_RATE_LIMIT_LIMIT: "5",
        P_RATE_LIMIT_WINDOW: "1 second"
      })(Config.nested(Provider.config, "P"))
      assert.deepInclude(some.rateLimiter, { limit: 5 })
    }))

  it.effect("the retry budget and the backoff have keys; they need MAX_ATTEMPTS", () =>
    Effect.gen(function*() {
      const settings = yield* fromEnv({
        P_BULKHEAD_PERMITS: "2",
        P_MAX_ATTEMPTS: "3",
        P_RETRY_BACKOFF_INITIAL: "200 millis",
        P_RETRY_BACKOFF_MAX: "5 seconds",
        P_RETRY_BACKOFF_FACTOR: "3",
        P_RETRY_BACKOFF_JITTER: "0",
        P_RETRY_BUDGET_RATIO: "0.2",
        P_RETRY_BUDGET_MIN_RETRIES: "1",
        P_RETRY_BUDGET_WINDOW: "1 minute"
      })(Config.nested(Provider.config, "P"))
      const retry = settings.retry
      assert.strictEqual(retry?.maxAttempts, 3)
      assert.isTrue(Duration.equals(Duration.fromInputUnsafe(retry?.backoff?.initial ?? 0), Duration.millis(200)))
      assert.deepInclude(retry?.backoff, { factor: 3, jitter: 0 })
      const budget = retry?.budget
      assert.deepInclude(budget === false ? {} : budget, { ratio: 0.2, minRetries: 1 })
      const off = yield* fromEnv({ P_BULKHEAD_PERMITS: "2", P_MAX_ATTEMPTS: "2", P_RETRY_BUDGET: "false" })(
        Config.nested(Provider.config, "P")
      )
      assert.strictEqual(off.retry?.budget, false)
      const missing = yield* Effect.flip(
        fromEnv({ P_BULKHEAD_PERMITS: "2", P_RETRY_BUDGET_RATIO: "0.2" })(Config.nested(Provider.config, "P"))
      )
      assert.include(String(missing), "MAX_ATTEMPTS")
    }))

  it.effect("each key decodes through the option's own schema: strict text, the value as written", () =>
    Effect.gen(function*() {
      for (
        const [key, text, message] of [
          ["MAX_ATTEMPTS", "3x", `MAX_ATTEMPTS must be an integer ≥ 1, got "3x"`],
          ["MAX_ATTEMPTS", "2.5", `MAX_ATTEMPTS must be an integer ≥ 1, got "2.5"`],
          ["RETRY_BACKOFF_FACTOR", "2x", `BACKOFF_FACTOR must be a finite number ≥ 1, got "2x"`],
          [
            "RETRY_BUDGET_MIN_RETRIES",
            "1e20",
            `BUDGET_MIN_RETRIES must be an integer ≥ 0, got "1e20" (not a safe integer`
          ],
          ["RETRY_BACKOFF_INITIAL", "-1 millis", `BACKOFF_INITIAL must be a duration ≥ 0, got "-1 millis"`]
        ] as const
      ) {
        const error = yield* Effect.flip(
          fromEnv({ P_BULKHEAD_PERMITS: "2", P_MAX_ATTEMPTS: "2", [`P_${key}`]: text })(
            Config.nested(Provider.config, "P")
          )
        )
        assert.include(String(error), message)
      }
    }))

  it.effect("a call's own options are refused in the same style", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({ name: "calls", bulkhead: { permits: 1 } })
      for (
        const [options, message] of [
          [{ cost: 2 ** 60 }, `provider "calls": cost must be an integer ≥ 1, got 1152921504606847000 (not a safe`],
          [{ permits: NaN }, `provider "calls": permits must be an integer ≥ 1, got NaN`],
          [{ totalTimeout: [-1, 0] as const }, `provider "calls": totalTimeout must be a duration > 0, got [-1, 0]`]
        ] as const
      ) {
        const exit = yield* Effect.exit(provider.call(Effect.void, options))
        assert.include(String(Exit.isFailure(exit) ? exit.cause : "succeeded"), message)
      }
    }).pipe(Effect.scoped))

  it.effect("a negative duration is a ConfigError naming the key and the value", () =>
    Effect.gen(function*() {
      for (const key of ["ATTEMPT_TIMEOUT", "TOTAL_TIMEOUT", "CIRCUIT_OPEN_FOR", "GRACE_PERIOD"]) {
        const error = yield* Effect.flip(
          fromEnv({ P_BULKHEAD_PERMITS: "2", [`P_${key}`]: "-5 seconds" })(Config.nested(Provider.config, "P"))
        )
        assert.include(String(error), `${key} must be a duration`)
        assert.include(String(error), `got "-5 seconds"`)
      }
    }))
})
