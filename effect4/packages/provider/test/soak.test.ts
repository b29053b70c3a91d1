import { assert, describe, it } from "@effect/vitest"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import { Flaky, seeded } from "./chaos.js"
import { expectIdle, uniqueName, yieldTurns } from "./utils.js"

const CALLS = Number(process.env.SOAK_CALLS ?? 10_000)
const WAVE = 100
const TICKS = 8
const TICK_MILLIS = 100

describe("soak", () => {
  it.effect(
    `${CALLS} calls with random interrupts, failures, defects, hangs, budgets and retries leave nothing behind`,
    () =>
      Effect.gen(function*() {
        const random = seeded(20_261_201)
        const pick = <A>(choices: ReadonlyArray<A>): A => choices[Math.floor(random() * choices.length)]
        const scope = yield* Scope.make()
        const provider = yield* Provider.make({
          name: uniqueName("soak"),
          bulkhead: { permits: 8, maxWaiting: 150, maxWait: "1 second" },
          // a fixed window wakes its waiters together: few distinct instants for the TestClock to step through
          rateLimiter: { limit: 40, window: "100 millis", algorithm: "fixed-window", maxWait: "500 millis" },
          // each budget is a Clock sleep the TestClock steps through one by one: the total is per call
          attemptTimeout: "300 millis",
          retry: { maxAttempts: 3, backoff: { initial: "50 millis", jitter: 0 } },
          circuitBreaker: { consecutiveFailures: 3, openFor: "20 millis" },
          gracePeriod: "1 hour"
        }).pipe(Scope.provide(scope))
        let bodies = 0
        const body = (kind: string, millis: number): Effect.Effect<number, Flaky> =>
          Effect.suspend(() => {
            bodies++
            switch (kind) {
              case "fail":
                return Effect.fail(new Flaky())
              case "defect":
                return Effect.die("boom")
              case "hang":
                return Effect.never
              case "slow":
                return Effect.as(Effect.sleep(millis), 1)
              default:
                return Effect.succeed(1)
            }
          })
        const outcomes = { success: 0, failure: 0, interrupted: 0 }
        for (let wave = 0; wave < CALLS / WAVE; wave++) {
          const calls: Array<{ fiber: Fiber.Fiber<number, unknown>; interruptAt: number }> = []
          for (let i = 0; i < WAVE; i++) {
            const kind = pick(["ok", "ok", "ok", "ok", "ok", "fail", "defect", "hang", "slow", "slow"])
            const options = pick<Provider.CallOptions>([
              {},
              {},
              { totalTimeout: "700 millis" },
              { totalTimeout: "2 seconds" },
              { retry: false },
              { attemptTimeout: "100 millis" }
            ])
            const effect = provider.call(body(kind, 50 * Math.floor(random() * 12)), options)
            const fiber = yield* Effect.forkChild(effect)
            calls.push({ fiber, interruptAt: random() < 0.15 ? Math.floor(random() * TICKS) : -1 })
          }
          yield* yieldTurns(5)
          for (let tick = 0; tick < TICKS; tick++) {
            for (const call of calls) {
              if (call.interruptAt === tick) yield* Effect.forkChild(Fiber.interrupt(call.fiber))
            }
            yield* TestClock.adjust(TICK_MILLIS)
            yield* yieldTurns(2)
          }
          yield* TestClock.adjust("10 seconds")
          for (const { fiber } of calls) {
            const exit = yield* Fiber.await(fiber)
            if (Exit.isSuccess(exit)) outcomes.success++
            else if (Exit.hasInterrupts(exit)) outcomes.interrupted++
            else outcomes.failure++
          }
        }
        yield* yieldTurns()
        // every permit free, no call in flight, no fiber left alive
        yield* expectIdle(provider.bulkhead)
        const stats = yield* provider.stats
        assert.strictEqual(stats.inFlight, 0)
        assert.strictEqual(stats.calls, CALLS)
        assert.strictEqual(Object.values(stats.outcomes).reduce((a, b) => a + b, 0), CALLS)
        assert.strictEqual(outcomes.success + outcomes.failure + outcomes.interrupted, CALLS)
        // the mix exercised everything, and the breaker kept letting calls through
        assert.isAbove(outcomes.success, CALLS / 10)
        assert.isAbove(stats.outcomes.interrupted, 0)
        assert.isAbove(stats.outcomes.call_timeout + stats.outcomes.total_timeout, 0)
        assert.isAbove(stats.outcomes.circuit_open, 0)
        assert.isAbove(bodies, CALLS / 5)
        // the breaker can close: after openFor a probe goes through and its success closes it
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* provider.call(Effect.succeed(2)), 2)
        assert.strictEqual((yield* provider.stats).circuit, "closed")
        // no fiber of the provider's left: Effect 4 has no Supervisor, but one left in its FiberSet
        // would hold the close for the grace hour
        const before = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
        yield* yieldTurns()
        assert.isDefined(closing.pollUnsafe())
        assert.strictEqual(yield* Effect.clockWith((clock) => clock.currentTimeMillis), before)
      }).pipe(Effect.provide(RateLimiterStore.layerMemory)),
    { timeout: 300_000 }
  )
})
