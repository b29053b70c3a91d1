import { assert, describe, it } from "@effect/vitest"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Cause, Deferred, Duration, Effect, Exit, Fiber, Option, Scope, Tracer } from "effect"
import { TestClock } from "effect/testing"
import { expectIdle, metricOf, now, uniqueName, yieldTurns } from "./utils.js"

const memory = Effect.provide(RateLimiterStore.layerMemory)

describe("interruption releases everything and records the phase", () => {
  it.effect("interrupted in the permit wait, in the limiter wait and in the call", () =>
    Effect.gen(function*() {
      const name = uniqueName("interrupt")
      const provider = yield* Provider.make({
        name,
        bulkhead: { permits: 2 },
        rateLimiter: { limit: 1, window: "10 seconds" }
      })
      // the call phase: holds a permit, its token taken
      const inCall = yield* Effect.forkChild(provider.call(Effect.never))
      yield* yieldTurns()
      // the limiter phase: holds the second permit, asleep until the next token in 10 s
      const inLimiter = yield* Effect.forkChild(provider.call(Effect.void))
      yield* yieldTurns()
      // the permit phase: queued behind both
      const inQueue = yield* Effect.forkChild(provider.call(Effect.void))
      yield* yieldTurns()
      assert.deepInclude(yield* provider.bulkhead.stats, { inFlight: 2, waiting: 1 })

      yield* Fiber.interrupt(inQueue)
      assert.deepInclude(yield* provider.bulkhead.stats, { inFlight: 2, waiting: 0 })
      yield* Fiber.interrupt(inLimiter)
      assert.deepInclude(yield* provider.bulkhead.stats, { inFlight: 1, waiting: 0 })
      yield* Fiber.interrupt(inCall)
      yield* expectIdle(provider.bulkhead)

      for (const phase of ["permit_wait", "limiter_wait", "call"]) {
        assert.strictEqual((yield* metricOf(Provider.interruptedTotal, name, { phase })).count, 1, phase)
      }
      const stats = yield* provider.stats
      assert.strictEqual(stats.outcomes.interrupted, 3)
      assert.strictEqual(stats.inFlight, 0)
      // the interrupted sleeper held the latest reservation: its token came back
      yield* TestClock.adjust("10 seconds")
      yield* provider.call(Effect.void)
      assert.strictEqual(yield* now, 10_000)
    }).pipe(memory))

  it.effect("the call's span carries the provider, the attempts and the interrupted phase", () =>
    Effect.gen(function*() {
      const name = uniqueName("span")
      const provider = yield* Provider.make({ name, bulkhead: { permits: 1 } })
      const spans: Array<Tracer.Span> = []
      const fiber = yield* Effect.forkChild(
        provider.call(Effect.flatMap(Effect.currentSpan, (span) => {
          spans.push(span)
          return Effect.never
        }))
      )
      yield* yieldTurns()
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(spans.length, 1)
      const span = spans[0]
      assert.strictEqual(span.name, "Provider.call")
      assert.strictEqual(span.attributes.get("sluice.provider"), name)
      assert.strictEqual(span.attributes.get("sluice.provider.attempts"), 1)
      assert.strictEqual(span.attributes.get("sluice.provider.outcome"), "interrupted")
      assert.strictEqual(span.attributes.get("sluice.provider.interrupted_phase"), "call")
      assert.strictEqual(span.attributes.get("sluice.bulkhead.permit_wait_ms"), 0)
    }))

  it.effect("the call's span ends with the call: its exit, the failure's stack trace, no span with tracing off", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({ name: uniqueName("span-end"), bulkhead: { permits: 1 } })
      const seen: Array<Tracer.Span> = []
      const capture = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.flatMap(Effect.currentSpan, (span) => {
          seen.push(span)
          return effect
        })
      assert.strictEqual(yield* provider.call(capture(Effect.succeed(1))), 1)
      const ok = seen[0]
      assert.strictEqual(ok.status._tag, "Ended")
      if (ok.status._tag === "Ended") assert.isTrue(Exit.isSuccess(ok.status.exit))
      assert.isFalse(ok.attributes.has("code.stacktrace"))
      yield* Effect.flip(provider.call(capture(Effect.fail("nope"))))
      const failed = seen[1]
      assert.strictEqual(failed.name, "Provider.call")
      if (failed.status._tag === "Ended") {
        // the caller's error, unwrapped, as `Effect.useSpan` would record it
        const exit = failed.status.exit
        assert.isTrue(Exit.isFailure(exit) && Cause.squash(exit.cause) === "nope")
      } else assert.fail("the span is not ended")
      assert.isString(failed.attributes.get("code.stacktrace"))
      // as Effect.makeSpan makes it: the caller's annotations and links, the caller's span as parent
      const [outer, inner] = yield* Effect.withSpan(
        Effect.zip(Effect.currentSpan, provider.call(Effect.currentSpan)),
        "outer"
      ).pipe(
        Effect.annotateSpans("request", "r-1"),
        Effect.linkSpans(Tracer.externalSpan({ spanId: "s", traceId: "t" }))
      )
      assert.strictEqual(inner.attributes.get("request"), "r-1")
      assert.strictEqual(inner.links.length, 1)
      assert.strictEqual(inner.traceId, outer.traceId)
      assert.isTrue(Option.isSome(inner.parent) && inner.parent.value.spanId === outer.spanId)
      // tracing off: the call runs under the caller's span (none here), and makes none of its own
      const off = yield* Effect.withTracerEnabled(provider.call(Effect.option(Effect.currentSpan)), false)
      assert.isTrue(Option.isNone(off))
    }))

  it.effect("interrupted during a backoff: nothing held, the phase is backoff", () =>
    Effect.gen(function*() {
      const name = uniqueName("interrupt-backoff")
      const provider = yield* Provider.make({
        name,
        bulkhead: { permits: 1 },
        attemptTimeout: "1 second",
        retry: { maxAttempts: 3, backoff: { initial: "5 seconds", jitter: 0 }, budget: false }
      })
      const fiber = yield* Effect.forkChild(provider.call(Effect.never))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(fiber)
      yield* expectIdle(provider.bulkhead)
      assert.strictEqual((yield* metricOf(Provider.interruptedTotal, name, { phase: "backoff" })).count, 1)
    }))
})

describe("circuit breaker", () => {
  class Down {
    readonly _tag = "Down"
  }

  it.effect("opens after consecutive failures, fails fast, probes once, and closes", () =>
    Effect.gen(function*() {
      let runs = 0
      let healthy = false
      const upstream = Effect.suspend(() => {
        runs++
        return healthy ? Effect.succeed("ok") : Effect.fail(new Down())
      })
      const provider = yield* Provider.make({
        name: uniqueName("circuit"),
        bulkhead: { permits: 4, maxWaiting: 0 },
        circuitBreaker: { consecutiveFailures: 3, openFor: "10 seconds" }
      })
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* Effect.flip(provider.call(upstream)))._tag, "Down")
      assert.strictEqual((yield* provider.stats).circuit, "open")

      // open: fails at once, the upstream is not called, nothing is held
      yield* TestClock.adjust("4 seconds")
      const open = yield* Effect.flip(provider.call(upstream))
      assert.strictEqual(open._tag, "CircuitOpen")
      if (open._tag === "CircuitOpen") {
        assert.strictEqual(open.state, "open")
        assert.strictEqual(open.failures, 3)
        assert.isTrue(Duration.equals(open.openedFor, Duration.seconds(4)))
        assert.isTrue(Duration.equals(open.retryAfter, Duration.seconds(6)))
      }
      assert.strictEqual(runs, 3)

      // half-open: one probe goes through; others fail fast while it runs
      yield* TestClock.adjust("6 seconds")
      healthy = true
      const probeGate = yield* Deferred.make<void>()
      const probe = yield* Effect.forkChild(provider.call(Effect.andThen(Deferred.await(probeGate), upstream)))
      yield* yieldTurns()
      const duringProbe = yield* Effect.flip(provider.call(upstream))
      assert.strictEqual(duringProbe._tag, "CircuitOpen")
      if (duringProbe._tag === "CircuitOpen") assert.strictEqual(duringProbe.state, "half-open")
      yield* Deferred.succeed(probeGate, undefined)
      assert.strictEqual(yield* Fiber.join(probe), "ok")
      assert.strictEqual((yield* provider.stats).circuit, "closed")
      assert.strictEqual(yield* provider.call(upstream), "ok")
      assert.strictEqual((yield* provider.stats).outcomes.circuit_open, 2)
    }))

  it.effect("a failed probe opens the circuit again; refusals by the bulkhead do not count", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("circuit-reopen"),
        bulkhead: { permits: 1, maxWaiting: 0 },
        circuitBreaker: { consecutiveFailures: 2, openFor: "1 second" }
      })
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(provider.call(Deferred.await(gate)))
      yield* yieldTurns()
      // three BulkheadFull refusals: the upstream was never reached, the circuit stays closed
      for (let i = 0; i < 3; i++) {
        assert.strictEqual((yield* Effect.flip(provider.call(Effect.void)))._tag, "BulkheadFull")
      }
      assert.strictEqual((yield* provider.stats).circuit, "closed")
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)

      yield* Effect.flip(provider.call(Effect.fail(new Down())))
      yield* Effect.flip(provider.call(Effect.fail(new Down())))
      assert.strictEqual((yield* provider.stats).circuit, "open")
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* Effect.flip(provider.call(Effect.fail(new Down()))))._tag, "Down")
      assert.strictEqual((yield* provider.stats).circuit, "open")
      assert.strictEqual((yield* Effect.flip(provider.call(Effect.void)))._tag, "CircuitOpen")
    }))

  it.effect("the failure-ratio mode opens when the ratio over the window is reached", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("circuit-ratio"),
        bulkhead: { permits: 1 },
        circuitBreaker: { failureRatio: { ratio: 0.5, window: 4 }, openFor: "1 second" }
      })
      const outcomes = [true, false, true, false] // success, failure, success, failure: 2 of 4
      for (const ok of outcomes.slice(0, 3)) {
        yield* Effect.exit(provider.call(ok ? Effect.void : Effect.fail(new Down())))
      }
      assert.strictEqual((yield* provider.stats).circuit, "closed") // only 3 calls in the window
      yield* Effect.exit(provider.call(Effect.fail(new Down())))
      assert.strictEqual((yield* provider.stats).circuit, "open")
    }))
})

describe("shutdown", () => {
  it.effect("closing stops admitting, lets in-flight calls finish within the grace period, then interrupts them", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const provider = yield* Provider.make({
        name: uniqueName("shutdown"),
        bulkhead: { permits: 2 },
        gracePeriod: "5 seconds"
      }).pipe(Scope.provide(scope))
      const quick = yield* Effect.forkChild(provider.call(Effect.as(Effect.sleep("2 seconds"), "done")))
      const stuck = yield* Effect.forkChild(Effect.flip(provider.call(Effect.never)))
      yield* yieldTurns()
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* yieldTurns()
      const refused = yield* Effect.flip(provider.call(Effect.void))
      assert.strictEqual(refused._tag, "ProviderClosed")
      if (refused._tag === "ProviderClosed") assert.strictEqual(refused.reason, "closing")

      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* Fiber.join(quick), "done")
      assert.isUndefined(closing.pollUnsafe())
      yield* TestClock.adjust("3 seconds")
      const interrupted = yield* Fiber.join(stuck)
      assert.strictEqual(interrupted._tag, "ProviderClosed")
      if (interrupted._tag === "ProviderClosed") assert.strictEqual(interrupted.reason, "grace-period-elapsed")
      yield* Fiber.join(closing)
      assert.strictEqual(yield* now, 5000)
      yield* expectIdle(provider.bulkhead)
      const stats = yield* provider.stats
      assert.strictEqual(stats.outcomes.closed, 2)
      assert.strictEqual(stats.outcomes.success, 1)
    }))

  it.effect("gracePeriod: Infinity is allowed: closing waits for the calls in flight, however long", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const provider = yield* Provider.make({
        name: uniqueName("shutdown-forever"),
        bulkhead: { permits: 1 },
        gracePeriod: Infinity
      }).pipe(Scope.provide(scope))
      const gate = yield* Deferred.make<void>()
      const running = yield* Effect.forkChild(provider.call(Effect.as(Deferred.await(gate), "done")))
      yield* yieldTurns()
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* yieldTurns()
      yield* TestClock.adjust("1 day")
      assert.isUndefined(closing.pollUnsafe())
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(running), "done")
      yield* Fiber.join(closing)
      yield* expectIdle(provider.bulkhead)
    }))

  it.effect("with nothing in flight, closing is immediate", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const provider = yield* Provider.make({ name: uniqueName("shutdown-idle"), bulkhead: { permits: 1 } }).pipe(
        Scope.provide(scope)
      )
      yield* provider.call(Effect.void)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(yield* now, 0)
    }))
})
