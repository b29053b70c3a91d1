import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Data, Deferred, Duration, Effect, Fiber, TestClock } from "effect"
import { expectIdle, metricOf, now, uniqueName, yieldTurns } from "./utils.js"

const memory = Effect.provide(RateLimiterStore.layerMemory)

/** An upstream's "slow down", with the pause it asks for (as `@sluice/http`'s 429 carries). */
class Pushback extends Data.TaggedError("Pushback")<{ readonly retryAfter: Duration.Duration }> {}

describe("budgets: each fires with its own tag and no other", () => {
  it.scoped("a saturated bulkhead with a fast call gives PermitWaitTimeout, never CallTimeout", () =>
    Effect.gen(function*() {
      const name = uniqueName("permit-wait")
      const provider = yield* Provider.make({
        name,
        bulkhead: { permits: 1, maxWait: "1 second" },
        attemptTimeout: "5 seconds"
      })
      const holder = yield* Effect.fork(provider.call(Effect.sleep("3 seconds")))
      yield* yieldTurns()
      const fast = yield* Effect.fork(Effect.flip(provider.call(Effect.succeed("fast"))))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fast)
      assert.strictEqual(error._tag, "PermitWaitTimeout")
      assert.strictEqual(yield* now, 1000)
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(holder)
      const stats = yield* provider.stats
      assert.strictEqual(stats.outcomes.permit_wait_timeout, 1)
      assert.strictEqual(stats.outcomes.call_timeout, 0)
      assert.strictEqual(stats.outcomes.success, 1)
      assert.strictEqual((yield* metricOf(Provider.outcomesTotal, name, { outcome: "permit_wait_timeout" })).count, 1)
      yield* expectIdle(provider.bulkhead)
    }))

  it.scoped("a slow call with free permits gives CallTimeout, with the attempt in the message", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: "nominatim-" + uniqueName("call"),
        bulkhead: { permits: 2, maxWait: "1 second" },
        attemptTimeout: "2 seconds"
      })
      const slow = yield* Effect.fork(Effect.flip(provider.call(Effect.sleep("5 seconds"))))
      yield* yieldTurns()
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(slow)
      assert.strictEqual(error._tag, "CallTimeout")
      if (error._tag !== "CallTimeout") return
      assert.strictEqual(error.attempt, 1)
      assert.isTrue(Duration.equals(error.timeout, Duration.seconds(2)))
      assert.match(error.message, /: the call took longer than its 2s attempt budget \(attempt 1 of 1\)$/)
      yield* expectIdle(provider.bulkhead)
    }))

  it.scoped("retries take a fresh permit and token each; backoff holds neither", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("retries"),
        bulkhead: { permits: 1 },
        rateLimiter: { limit: 10, window: "1 second" },
        attemptTimeout: "1 second",
        retry: { maxAttempts: 3, backoff: { initial: "500 millis", jitter: 0 }, budget: false }
      })
      const slow = yield* Effect.fork(Effect.flip(provider.call(Effect.never)))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      // attempt 1 timed out at 1 s: during the backoff nothing is held
      assert.strictEqual((yield* provider.bulkhead.stats).inFlight, 0)
      // another caller gets the permit and a token during the backoff, without waiting
      const other = yield* provider.call(Effect.succeed("in between"))
      assert.strictEqual(other, "in between")
      assert.strictEqual(yield* now, 1000)
      yield* TestClock.adjust("500 millis") // attempt 2 starts at 1.5 s
      assert.strictEqual((yield* provider.bulkhead.stats).inFlight, 1)
      yield* TestClock.adjust("1 second") // attempt 2 times out at 2.5 s, backoff 1 s
      assert.strictEqual((yield* provider.bulkhead.stats).inFlight, 0)
      yield* TestClock.adjust("2 seconds") // attempt 3 from 3.5 s to 4.5 s
      const error = yield* Fiber.join(slow)
      assert.strictEqual(error._tag, "CallTimeout")
      if (error._tag === "CallTimeout") assert.deepStrictEqual([error.attempt, error.maxAttempts], [3, 3])
      const stats = yield* provider.stats
      assert.strictEqual(stats.attempts, 4) // three attempts and the other call
      assert.strictEqual(stats.permitWait.count, 4)
      assert.strictEqual(stats.limiterWait.count, 4) // a token per attempt
      yield* expectIdle(provider.bulkhead)
    }).pipe(memory))

  it.scoped("the total budget bounds attempts and backoff: TotalTimeout during the third attempt", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("total"),
        bulkhead: { permits: 1 },
        attemptTimeout: "1 second",
        totalTimeout: "2500 millis",
        retry: { maxAttempts: 5, backoff: { initial: "100 millis", factor: 1, jitter: 0 }, budget: false }
      })
      const fiber = yield* Effect.fork(Effect.flip(provider.call(Effect.never)))
      yield* yieldTurns()
      yield* TestClock.adjust("2499 millis")
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "TotalTimeout")
      if (error._tag !== "TotalTimeout") return
      assert.strictEqual(error.phase, "call")
      assert.strictEqual(error.attempts, 3)
      assert.isTrue(Duration.equals(error.elapsed, Duration.millis(2500)))
      yield* expectIdle(provider.bulkhead)
    }))

  it.scoped("a backoff that would pass the total budget fails at once with TotalTimeout", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("total-backoff"),
        bulkhead: { permits: 1 },
        attemptTimeout: "1 second",
        totalTimeout: "1500 millis",
        retry: { maxAttempts: 3, backoff: { initial: "1 second", jitter: 0 }, budget: false }
      })
      const fiber = yield* Effect.fork(Effect.flip(provider.call(Effect.never)))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "TotalTimeout")
      if (error._tag === "TotalTimeout") assert.strictEqual(error.phase, "backoff")
      assert.strictEqual(yield* now, 1000)
    }))

  it.scoped("attempt and total expiring at the same instant: the innermost wins (CallTimeout)", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("tie"),
        bulkhead: { permits: 1 },
        attemptTimeout: "2 seconds",
        totalTimeout: "2 seconds",
        retry: { maxAttempts: 3, backoff: { initial: "0 millis", jitter: 0 }, budget: false }
      })
      const fibers = yield* Effect.forEach(
        [1, 2, 3],
        () => Effect.fork(Effect.flip(provider.call(Effect.never))),
        { concurrency: 1 }
      )
      yield* yieldTurns()
      yield* TestClock.adjust("2 seconds")
      // permits: 1, so only the first reached its call; the others waited for the permit until the total ran out
      const errors = yield* Effect.forEach(fibers, Fiber.join)
      assert.deepStrictEqual(errors.map((e) => e._tag), ["CallTimeout", "TotalTimeout", "TotalTimeout"])
      const second = errors[1]
      if (second._tag === "TotalTimeout") assert.strictEqual(second.phase, "permit_wait")
      yield* expectIdle(provider.bulkhead)
    }))

  // the bulkhead given as settings or as an instance: either way its own maxWait is the inner budget
  for (const given of ["settings", "an instance"] as const) {
    it.scoped(`a permit wait and the total expiring at once: PermitWaitTimeout (bulkhead given as ${given})`, () =>
      Effect.gen(function*() {
        const name = uniqueName("tie-permit")
        const settings = { permits: 1, maxWait: "1 second" } as const
        const bulkhead = given === "settings" ? settings : yield* Bulkhead.make({ name, ...settings })
        const provider = yield* Provider.make({ name, bulkhead, totalTimeout: "1 second" })
        const holder = yield* Effect.fork(provider.call(Effect.never, { totalTimeout: "1 minute" }))
        yield* yieldTurns()
        const waiter = yield* Effect.fork(Effect.flip(provider.call(Effect.void)))
        yield* yieldTurns()
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* Fiber.join(waiter))._tag, "PermitWaitTimeout")
        yield* Fiber.interrupt(holder)
        yield* expectIdle(provider.bulkhead)
      }))
  }

  it.scoped("the limiter's wait is capped by what is left of the total: RateLimitExceeded at once", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("limiter-cap"),
        bulkhead: { permits: 4 },
        rateLimiter: { limit: 1, window: "10 seconds" },
        totalTimeout: "5 seconds"
      })
      yield* provider.call(Effect.void)
      const error = yield* Effect.flip(provider.call(Effect.void))
      assert.strictEqual(error._tag, "RateLimitExceeded")
      if (error._tag === "RateLimitExceeded") {
        assert.isTrue(Duration.equals(error.maxWait, Duration.seconds(5)))
        assert.isTrue(Duration.equals(error.retryAfter, Duration.seconds(5)))
      }
      assert.strictEqual(yield* now, 0)
      // with more time left the same call waits for its token instead
      const waited = yield* Effect.fork(provider.call(now, { totalTimeout: "1 minute" }))
      yield* yieldTurns()
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* Fiber.join(waited), 10_000)
      yield* expectIdle(provider.bulkhead)
    }).pipe(memory))

  it.scoped("the retry budget stops a retry storm with RetryBudgetExhausted carrying the last error", () =>
    Effect.gen(function*() {
      class Flaky {
        readonly _tag = "Flaky"
        readonly [Provider.RetryableTypeId] = true
      }
      let runs = 0
      const provider = yield* Provider.make({
        name: uniqueName("retry-budget"),
        bulkhead: { permits: 4 },
        retry: {
          maxAttempts: 5,
          backoff: { initial: "0 millis", jitter: 0 },
          budget: { ratio: 0.5, minRetries: 1, window: "10 seconds" }
        }
      })
      const failing = Effect.suspend(() => {
        runs++
        return Effect.fail(new Flaky())
      })
      // first call: 1 first attempt allows max(1, 0.5) = 1 retry; the second retry is refused
      const error = yield* Effect.flip(provider.call(failing))
      assert.strictEqual(error._tag, "RetryBudgetExhausted")
      if (error._tag !== "RetryBudgetExhausted") return
      assert.strictEqual(error.attempt, 3)
      assert.instanceOf(error.lastError, Flaky)
      assert.deepStrictEqual([error.retries, error.firstAttempts, error.allowed], [1, 1, 1])
      assert.strictEqual(runs, 2)
      // the window forgets after 10 s
      yield* TestClock.adjust("10 seconds")
      const again = yield* Effect.flip(provider.call(failing))
      assert.strictEqual(again._tag, "RetryBudgetExhausted")
      assert.strictEqual(runs, 4)
      assert.strictEqual((yield* provider.stats).outcomes.retry_budget_exhausted, 2)
    }))

  it.scoped("BulkheadFull is never retried, whatever the predicate says", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("full"),
        bulkhead: { permits: 1, maxWaiting: 0 },
        retry: { maxAttempts: 3, isRetryable: () => true, backoff: { initial: "0 millis", jitter: 0 }, budget: false }
      })
      const held = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(provider.call(Deferred.await(held)))
      yield* yieldTurns()
      const error = yield* Effect.flip(provider.call(Effect.void))
      assert.strictEqual(error._tag, "BulkheadFull")
      assert.strictEqual((yield* provider.stats).attempts, 2)
      yield* Deferred.succeed(held, undefined)
      yield* Fiber.join(holder)
    }))

  it.scoped("per-call options: retry: false makes one attempt; a per-call attempt budget overrides", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("per-call"),
        bulkhead: { permits: 1 },
        attemptTimeout: "10 seconds",
        retry: { maxAttempts: 3, backoff: { initial: "0 millis", jitter: 0 }, budget: false }
      })
      const fiber = yield* Effect.fork(
        Effect.flip(provider.call(Effect.never, { attemptTimeout: "1 second", retry: false }))
      )
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "CallTimeout")
      if (error._tag === "CallTimeout") assert.deepStrictEqual([error.attempt, error.maxAttempts], [1, 1])
      assert.strictEqual((yield* provider.stats).attempts, 1)
    }))

  it.scoped("a total shorter than the attempt budget is allowed: it cuts the attempt with TotalTimeout", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("total-short"),
        bulkhead: { permits: 1 },
        attemptTimeout: "5 seconds",
        totalTimeout: "1 second"
      })
      const fiber = yield* Effect.fork(Effect.flip(provider.call(Effect.never)))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "TotalTimeout")
      if (error._tag === "TotalTimeout") assert.strictEqual(error.phase, "call")
      yield* expectIdle(provider.bulkhead)
    }))

  it.scoped("without a limiter, a retry waits out the pause the upstream asked for (retryAfter)", () =>
    Effect.gen(function*() {
      const retry = {
        maxAttempts: 3,
        backoff: { initial: "100 millis", jitter: 0 },
        isRetryable: (error: unknown) => error instanceof Pushback
      } as const
      const attempts: Array<number> = []
      const work = Effect.flatMap(now, (at) => {
        attempts.push(at)
        return attempts.length === 1
          ? Effect.fail(new Pushback({ retryAfter: Duration.seconds(2) }))
          : Effect.succeed("ok")
      })
      const provider = yield* Provider.make({
        name: uniqueName("pushback"),
        bulkhead: { permits: 1 },
        totalTimeout: "1 minute",
        retry
      })
      const call = yield* Effect.fork(provider.call(work))
      yield* yieldTurns()
      yield* TestClock.adjust("1999 millis")
      assert.deepStrictEqual(attempts, [0])
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* Fiber.join(call), "ok")
      assert.deepStrictEqual(attempts, [0, 2000])
      // a pause longer than what is left of the total budget ends the call now, as a backoff would
      const short = yield* Provider.make({
        name: uniqueName("pushback-short"),
        bulkhead: { permits: 1 },
        totalTimeout: "1 second",
        retry
      })
      attempts.length = 0
      const error = yield* Effect.flip(short.call(work))
      assert.strictEqual(error._tag, "TotalTimeout")
      assert.deepStrictEqual(attempts, [2000])
    }))

  it.effect("invalid options are a defect naming the provider and the value", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Provider.make({ name: "bad", bulkhead: { permits: 1 }, attemptTimeout: -5 }).pipe(Effect.scoped)
      )
      assert.isTrue(exit._tag === "Failure")
      if (exit._tag === "Failure") {
        assert.include(String(exit.cause), "provider \"bad\": attemptTimeout must be a duration > 0, got -5")
      }
    }))
})
