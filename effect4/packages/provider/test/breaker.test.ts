import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import { expectIdle, uniqueName, yieldTurns } from "./utils.js"

class Down {
  readonly _tag = "Down"
}

type Phase = "permit_wait" | "limiter_wait" | "call"
type Ending = "caller interrupted" | "total timeout" | "shutdown"

/**
 * A probe ended from outside proves nothing about the upstream: whatever phase it was in and
 * however it ended, the next call is the probe and can close the circuit.
 */
const sweep = (phase: Phase, ending: Ending) =>
  Effect.gen(function*() {
    const name = uniqueName(`probe-${phase}`)
    const scope = yield* Scope.make()
    const bulkhead = yield* Bulkhead.make({ name, permits: 1 })
    const limiter = yield* RateLimiter.make({ name, limit: 1, window: "1 minute" })
    const provider = yield* Provider.make({
      name,
      bulkhead,
      rateLimiter: limiter,
      circuitBreaker: { consecutiveFailures: 1, openFor: "1 second" },
      gracePeriod: "1 second"
    }).pipe(Scope.provide(scope))
    yield* Effect.flip(provider.call(Effect.fail(new Down())))
    assert.strictEqual((yield* provider.stats).circuit, "open")
    yield* TestClock.adjust("1 second")
    // the limiter's one token per minute went to the failed call: a probe past the bulkhead sleeps
    const gate = yield* Deferred.make<void>()
    const holder = phase === "permit_wait" ? yield* Effect.forkChild(bulkhead.run(Deferred.await(gate))) : undefined
    if (phase === "call") yield* TestClock.adjust("1 minute")
    yield* yieldTurns()
    // in the limiter, a total shorter than the sleep is refused at once: it ends as the token comes
    const total = phase === "limiter_wait" ? "59 seconds" : "5 seconds"
    const probe = yield* Effect.forkChild(
      Effect.exit(provider.call(Effect.never, ending === "total timeout" ? { totalTimeout: total } : {}))
    )
    yield* yieldTurns()
    assert.strictEqual((yield* provider.stats).circuit, "half-open")
    if (ending === "caller interrupted") yield* Fiber.interrupt(probe)
    else if (ending === "total timeout") {
      yield* TestClock.adjust(total)
      const exit = yield* Fiber.join(probe)
      assert.isTrue(Exit.isFailure(exit) && String(exit.cause).includes("TotalTimeout"), String(exit))
    } else {
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(closing)
      yield* Fiber.join(probe)
    }
    yield* Deferred.succeed(gate, undefined)
    if (holder !== undefined) yield* Fiber.join(holder)
    yield* expectIdle(bulkhead)
    if (ending === "shutdown") return
    // the next call probes: a token for it, and it closes the circuit
    yield* TestClock.adjust("1 minute")
    assert.strictEqual(yield* provider.call(Effect.succeed("ok")), "ok")
    assert.strictEqual((yield* provider.stats).circuit, "closed")
    yield* Scope.close(scope, Exit.void)
  }).pipe(Effect.provide(RateLimiterStore.layerMemory))

describe("circuit breaker: a probe ended from outside proves nothing", () => {
  for (const phase of ["permit_wait", "limiter_wait", "call"] as const) {
    for (const ending of ["caller interrupted", "total timeout"] as const) {
      it.effect(`probe in ${phase}, ${ending}: the next call probes and closes the circuit`, () => sweep(phase, ending))
    }
    it.effect(`probe in ${phase}, ended by shutdown: permits free`, () => sweep(phase, "shutdown"))
  }

  it.effect("a probe interrupted while it sleeps in a backoff: the next call probes", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: uniqueName("probe-backoff"),
        bulkhead: { permits: 1 },
        attemptTimeout: "1 second",
        retry: { maxAttempts: 2, isRetryable: () => true, backoff: { initial: "1 minute", jitter: 0 }, budget: false },
        circuitBreaker: { consecutiveFailures: 2, openFor: "1 second" }
      })
      yield* Effect.flip(provider.call(Effect.fail(new Down()), { retry: false }))
      yield* Effect.flip(provider.call(Effect.fail(new Down()), { retry: false }))
      assert.strictEqual((yield* provider.stats).circuit, "open")
      yield* TestClock.adjust("1 second")
      // the probe times out (a failure: open again), and its retry is refused at once
      const probe = yield* Effect.forkChild(Effect.exit(provider.call(Effect.never)))
      yield* yieldTurns()
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* provider.stats).circuit, "open")
      yield* Fiber.interrupt(probe)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* provider.call(Effect.succeed("ok")), "ok")
      assert.strictEqual((yield* provider.stats).circuit, "closed")
    }))
})
