import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Context, Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import { expectIdle, metricOf, now, uniqueName, yieldTurns } from "./utils.js"

describe("ending a call from outside: budgets, shutdown and interruption", () => {
  it.effect("a call that times out is interrupted, its finalizers done, before CallTimeout is seen", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("attempt-finalizer"),
        bulkhead: { permits: 1 },
        attemptTimeout: "1 second"
      })
      let finalized = 0
      const fiber = yield* Effect.forkChild(
        Effect.flip(provider.call(Effect.onInterrupt(Effect.never, () => Effect.sync(() => finalized++))))
      )
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "CallTimeout")
      assert.strictEqual(finalized, 1)
      yield* expectIdle(provider.bulkhead)
    }))

  it.effect("a caller interrupted in a call with an attempt budget: the call is interrupted and awaited", () =>
    Effect.gen(function*() {
      const name = uniqueName("interrupt-attempt")
      const provider = yield* Provider.make({ name, bulkhead: { permits: 1 }, attemptTimeout: "10 seconds" })
      let finalized = 0
      const fiber = yield* Effect.forkChild(
        provider.call(Effect.onInterrupt(Effect.never, () => Effect.sync(() => finalized++)))
      )
      yield* yieldTurns()
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(finalized, 1)
      yield* expectIdle(provider.bulkhead)
      assert.strictEqual((yield* metricOf(Provider.interruptedTotal, name, { phase: "call" })).count, 1)
      // the attempt's timer is gone with it: nothing happens when its time comes
      yield* TestClock.adjust("10 seconds")
      const stats = yield* provider.stats
      assert.deepInclude(stats.outcomes, { interrupted: 1, call_timeout: 0 })
      assert.strictEqual(stats.inFlight, 0)
    }))

  it.effect("a caller interrupted before its total budget runs out: no TotalTimeout afterwards", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("interrupt-total"),
        bulkhead: { permits: 1 },
        totalTimeout: "5 seconds"
      })
      const fiber = yield* Effect.forkChild(provider.call(Effect.never))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(fiber)
      yield* TestClock.adjust("10 seconds")
      const stats = yield* provider.stats
      assert.deepInclude(stats.outcomes, { interrupted: 1, total_timeout: 0 })
      yield* expectIdle(provider.bulkhead)
    }))

  it.effect("calls that complete at once under a total budget end with their own result", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("total-sync"),
        bulkhead: { permits: 1 },
        totalTimeout: "1 second",
        attemptTimeout: "1 second"
      })
      for (let i = 0; i < 3; i++) assert.strictEqual(yield* provider.call(Effect.succeed(i)), i)
      assert.strictEqual(yield* Effect.flip(provider.call(Effect.fail("nope"))) as Effect.Effect<unknown>, "nope")
      yield* TestClock.adjust("2 seconds")
      assert.deepInclude((yield* provider.stats).outcomes, { success: 3, call_error: 1, total_timeout: 0 })
    }))

  it.effect("the grace period ends calls in every phase: queued for a permit, in the call, in a backoff", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const provider = yield* Provider.make({
        name: uniqueName("shutdown-phases"),
        bulkhead: { permits: 1 },
        attemptTimeout: "1 second",
        retry: { maxAttempts: 2, backoff: { initial: "1 minute", jitter: 0 }, budget: false },
        gracePeriod: "5 seconds"
      }).pipe(Scope.provide(scope))
      // times out at 1 s, then waits a minute before its retry
      const backingOff = yield* Effect.forkChild(Effect.flip(provider.call(Effect.never)))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      const inCall = yield* Effect.forkChild(Effect.flip(provider.call(Effect.never, { attemptTimeout: "1 hour" })))
      yield* yieldTurns()
      const queued = yield* Effect.forkChild(Effect.flip(provider.call(Effect.void)))
      yield* yieldTurns()
      assert.deepInclude(yield* provider.bulkhead.stats, { inFlight: 1, waiting: 1 })
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* yieldTurns()
      yield* TestClock.adjust("5 seconds")
      for (const fiber of [backingOff, inCall, queued]) {
        const error = yield* Fiber.join(fiber)
        assert.strictEqual(error._tag, "ProviderClosed")
        if (error._tag === "ProviderClosed") assert.strictEqual(error.reason, "grace-period-elapsed")
      }
      yield* Fiber.join(closing)
      assert.strictEqual(yield* now, 6000)
      yield* expectIdle(provider.bulkhead)
      const stats = yield* provider.stats
      assert.strictEqual(stats.outcomes.closed, 3)
      assert.strictEqual(stats.inFlight, 0)
    }))

  it.effect("a call that ends on its own as the grace period ends is counted once", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const provider = yield* Provider.make({
        name: uniqueName("shutdown-tie"),
        bulkhead: { permits: 2 },
        gracePeriod: "1 second"
      }).pipe(Scope.provide(scope))
      const gate = yield* Deferred.make<void>()
      const fiber = yield* Effect.forkChild(Effect.result(provider.call(Deferred.await(gate))))
      yield* yieldTurns()
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* yieldTurns()
      yield* Deferred.succeed(gate, undefined)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(closing)
      yield* Fiber.join(fiber)
      const stats = yield* provider.stats
      assert.strictEqual(stats.calls, 1)
      assert.strictEqual(stats.outcomes.success + stats.outcomes.closed, 1)
      yield* expectIdle(provider.bulkhead)
    }))
})

describe("under gracePeriod: Infinity a call runs in its caller's fiber", () => {
  const fiberOfCall = (options: Omit<Provider.Options, "name" | "bulkhead">) =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({ ...options, name: uniqueName("fiber"), bulkhead: { permits: 1 } })
      const fiberId = Effect.withFiber((fiber) => Effect.succeed(fiber.id))
      const caller = yield* fiberId
      return caller === (yield* provider.call(fiberId))
    }).pipe(Effect.provide(RateLimiterStore.layerMemory))

  it.effect("nothing will end it from outside; with a finite grace period, in a fiber of the provider's", () =>
    Effect.gen(function*() {
      assert.isTrue(yield* fiberOfCall({ gracePeriod: Infinity }))
      assert.isTrue(yield* fiberOfCall({ gracePeriod: Infinity, retry: { maxAttempts: 3 } }))
      assert.isFalse(yield* fiberOfCall({}))
      assert.isFalse(yield* fiberOfCall({ gracePeriod: "1 hour" }))
      // a total budget within the grace period does not make a call safe to leave unwatched
      assert.isFalse(yield* fiberOfCall({ gracePeriod: "10 seconds", totalTimeout: "1 second" }))
    }))

  it.effect("as without a provider: a fiber the call forks lives on after it, a child of the caller's", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("refs-own"),
        bulkhead: { permits: 1 },
        gracePeriod: Infinity
      })
      const gate = yield* Deferred.make<void>()
      const child = yield* provider.call(Effect.forkChild(Deferred.await(gate)))
      yield* yieldTurns()
      assert.isUndefined(child.pollUnsafe())
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(child)
    }))
})

describe("the grace period ends a call wherever it is stuck", () => {
  it.effect("one stuck where no budget reaches (a bulkhead that never answers), with a total budget set", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const real = yield* Bulkhead.make({ name: uniqueName("never-answers"), permits: 1 })
      const neverAnswers: Bulkhead.Bulkhead = { ...real, run: () => Effect.never, stats: real.stats }
      const provider = yield* Provider.make({
        name: uniqueName("shutdown-stuck"),
        bulkhead: neverAnswers,
        totalTimeout: "1 second",
        gracePeriod: "5 seconds"
      }).pipe(Scope.provide(scope))
      const stuck = yield* Effect.forkChild(Effect.flip(provider.call(Effect.void)))
      yield* yieldTurns()
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* yieldTurns()
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(stuck)
      assert.strictEqual(error._tag, "ProviderClosed")
      if (error._tag === "ProviderClosed") assert.strictEqual(error.reason, "grace-period-elapsed")
      yield* Fiber.join(closing)
      assert.strictEqual(yield* now, 5000)
    }).pipe(Effect.provide(RateLimiterStore.layerMemory)))
})

describe("the call runs as if in its caller", () => {
  it.effect("Effect 4 has no fiber refs to pass back: the caller's references are unchanged by the call", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("refs"),
        bulkhead: { permits: 1 },
        attemptTimeout: "1 second",
        totalTimeout: "2 seconds"
      })
      const Tenant = Context.Reference<string>("test/Tenant", { defaultValue: () => "none" })
      const inside = yield* provider.call(Effect.provideService(Effect.service(Tenant), Tenant, "call"))
      assert.strictEqual(inside, "call")
      assert.strictEqual(yield* Tenant, "none")
      // and the caller's own value is what the call sees, in the provider's fiber as in its caller's
      const seen = yield* provider.call(Effect.service(Tenant)).pipe(Effect.provideService(Tenant, "caller"))
      assert.strictEqual(seen, "caller")
    }))

  it.effect("the call sees the caller's services and span", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({ name: uniqueName("context"), bulkhead: { permits: 1 } })
      const [parent, inner] = yield* Effect.withSpan(
        Effect.zip(Effect.currentSpan, provider.call(Effect.currentSpan)),
        "outer"
      )
      assert.strictEqual(inner.name, "Provider.call")
      assert.strictEqual(inner.parent._tag, "Some")
      if (inner.parent._tag === "Some") assert.strictEqual(inner.parent.value.spanId, parent.spanId)
      // the caller's own span is back once the call is over
      const after = yield* Effect.withSpan(Effect.andThen(provider.call(Effect.void), Effect.currentSpan), "outer-2")
      assert.strictEqual(after.name, "outer-2")
    }))
})
