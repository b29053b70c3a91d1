import { assert, describe, it } from "@effect/vitest"
import { CircuitBreaker, Provider, RetryBudget } from "@sluice/provider"
import { Deferred, Duration, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { metricOf, uniqueName, yieldTurns } from "./utils.js"

class Down {
  readonly _tag = "Down"
}

describe("CircuitBreaker on its own, around any effect", () => {
  it.effect("opens after consecutive failures, fails fast with CircuitOpen, probes once, and closes", () =>
    Effect.gen(function*() {
      const name = uniqueName("breaker")
      const breaker = yield* CircuitBreaker.make({ name, consecutiveFailures: 2, openFor: "10 seconds" })
      let runs = 0
      let healthy = false
      const upstream = Effect.suspend(() => {
        runs++
        return healthy ? Effect.succeed("ok") : Effect.fail(new Down())
      }).pipe(CircuitBreaker.withCircuitBreaker(breaker))
      assert.strictEqual((yield* Effect.flip(upstream))._tag, "Down")
      assert.deepInclude(yield* breaker.stats, { state: "closed", consecutiveFailures: 1 })
      assert.strictEqual((yield* Effect.flip(upstream))._tag, "Down")
      assert.strictEqual((yield* breaker.stats).state, "open")
      assert.strictEqual((yield* metricOf(CircuitBreaker.circuitState, name)).value, 2)
      yield* TestClock.adjust("4 seconds")
      const open = yield* Effect.flip(upstream)
      assert.strictEqual(open._tag, "CircuitOpen")
      if (open._tag === "CircuitOpen") {
        // used on its own, the error names the breaker and no provider
        assert.strictEqual(open.breaker, name)
        assert.isUndefined(open.provider)
        assert.isTrue(String(open).startsWith(`CircuitOpen: circuit breaker "${name}": the circuit opened`))
        assert.strictEqual(open.failures, 2)
        assert.isTrue(Duration.equals(open.retryAfter, Duration.seconds(6)))
      }
      assert.strictEqual(runs, 2)
      yield* TestClock.adjust("6 seconds")
      healthy = true
      const gate = yield* Deferred.make<void>()
      const probe = yield* Effect.forkChild(
        Effect.andThen(Deferred.await(gate), Effect.succeed("ok")).pipe(CircuitBreaker.withCircuitBreaker(breaker))
      )
      yield* yieldTurns()
      const during = yield* Effect.flip(upstream)
      assert.isTrue(during._tag === "CircuitOpen" && during.state === "half-open")
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(probe), "ok")
      assert.strictEqual((yield* breaker.stats).state, "closed")
      assert.strictEqual(yield* upstream, "ok")
    }))

  it.effect("an interrupted probe proves nothing; failures isFailure rejects count as successes", () =>
    Effect.gen(function*() {
      const breaker = yield* CircuitBreaker.make({
        name: uniqueName("breaker-probe"),
        consecutiveFailures: 1,
        openFor: "1 second",
        isFailure: (error) => error instanceof Down
      })
      yield* Effect.exit(CircuitBreaker.withCircuitBreaker(Effect.fail(new Down()), breaker))
      assert.strictEqual((yield* breaker.stats).state, "open")
      yield* TestClock.adjust("1 second")
      const probe = yield* Effect.forkChild(CircuitBreaker.withCircuitBreaker(Effect.never, breaker))
      yield* yieldTurns()
      assert.strictEqual((yield* breaker.stats).state, "half-open")
      yield* Fiber.interrupt(probe)
      // the next call is the probe; a failure that does not count closes the circuit
      const exit = yield* Effect.exit(CircuitBreaker.withCircuitBreaker(Effect.fail("not a failure"), breaker))
      assert.deepStrictEqual(exit, Exit.fail("not a failure"))
      assert.strictEqual((yield* breaker.stats).state, "closed")
    }))

  it.effect("the failure ratio over the window; a defect counts as a failure", () =>
    Effect.gen(function*() {
      const breaker = yield* CircuitBreaker.make({
        name: uniqueName("breaker-ratio"),
        failureRatio: { ratio: 0.5, window: 4 }
      })
      const run = (effect: Effect.Effect<unknown, unknown>) =>
        Effect.exit(CircuitBreaker.withCircuitBreaker(effect, breaker))
      yield* run(Effect.void)
      yield* run(Effect.die("boom"))
      yield* run(Effect.void)
      assert.deepInclude(yield* breaker.stats, { state: "closed", windowCalls: 3, windowFailures: 1 })
      yield* run(Effect.fail(new Down()))
      assert.strictEqual((yield* breaker.stats).state, "open")
    }))

  it("invalid options throw, naming the breaker and the value", () => {
    assert.throws(
      () => CircuitBreaker.unsafeMake({ name: "geo", consecutiveFailures: 0 }),
      /circuit breaker "geo": consecutiveFailures must be/
    )
    assert.throws(
      () => CircuitBreaker.unsafeMake({ name: "geo", failureRatio: { ratio: 0.5, window: 2, minimumCalls: 3 } }),
      /circuit breaker "geo": failureRatio.minimumCalls must be ≤ window \(2\), got 3/
    )
  })
})

describe("a breaker and a budget given to providers are shared", () => {
  it.effect("two providers on one breaker: failures through either open it for both", () =>
    Effect.gen(function*() {
      const breaker = yield* CircuitBreaker.make({ name: uniqueName("shared"), consecutiveFailures: 2 })
      const aName = uniqueName("a")
      const a = yield* Provider.make({ name: aName, bulkhead: { permits: 1 }, circuitBreaker: breaker })
      const b = yield* Provider.make({ name: uniqueName("b"), bulkhead: { permits: 1 }, circuitBreaker: breaker })
      yield* Effect.flip(a.call(Effect.fail(new Down())))
      yield* Effect.flip(b.call(Effect.fail(new Down())))
      assert.strictEqual((yield* breaker.stats).state, "open")
      const open = yield* Effect.flip(a.call(Effect.void))
      assert.strictEqual(open._tag, "CircuitOpen")
      // the provider whose call was refused, and the breaker it shares
      if (open._tag === "CircuitOpen") assert.deepInclude(open, { provider: aName, breaker: breaker.name })
      assert.strictEqual((yield* a.stats).circuit, "open")
    }).pipe(Effect.scoped))

  it.effect("two providers on one retry budget: the first attempts of one buy the retries of the other", () =>
    Effect.gen(function*() {
      const budget = yield* RetryBudget.make({ name: uniqueName("shared"), ratio: 0.5, minRetries: 0 })
      const retry = { maxAttempts: 2, backoff: { initial: "0 millis" as const }, isRetryable: () => true, budget }
      const a = yield* Provider.make({ name: uniqueName("a"), bulkhead: { permits: 1 }, retry })
      const bName = uniqueName("b")
      const b = yield* Provider.make({ name: bName, bulkhead: { permits: 1 }, retry })
      const refused = yield* Effect.flip(b.call(Effect.fail(new Down())))
      assert.strictEqual(refused._tag, "RetryBudgetExhausted")
      if (refused._tag === "RetryBudgetExhausted") assert.deepInclude(refused, { provider: bName, budget: budget.name })
      yield* a.call(Effect.void)
      let runs = 0
      const flaky = Effect.suspend(() => ++runs === 1 ? Effect.fail(new Down()) : Effect.succeed(runs))
      // 3 first attempts in the window allow 1 retry
      assert.strictEqual(yield* b.call(flaky), 2)
      assert.deepInclude(yield* budget.stats, { firstAttempts: 3, retries: 1 })
    }).pipe(Effect.scoped))
})
